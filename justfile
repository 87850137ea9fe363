# Development tasks. `just --list` shows them.
set shell := ["bash", "-euo", "pipefail", "-c"]

# Run the whole test suite (arguments go to pytest).
test *args:
    pytest {{args}}

# Lint the code, validate the shipped packs and check generated files for drift.
lint:
    ruff check .
    ruff format --check .
    capy rules validate
    capy rules gen --check

# Regenerate generated files (schema enums, docs/rules.md).
gen:
    capy rules gen

# Print the benchmark figures.
bench:
    capy bench rules

# Run the MCP server on stdio.
serve:
    capy serve
