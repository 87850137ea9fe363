# Development tasks. `just --list` shows them.
set shell := ["bash", "-euo", "pipefail", "-c"]

# Run the whole test suite on every core (arguments go to pytest; `-n 0` runs it in one process).
test *args:
    pytest -n auto {{args}}

# Lint the code, validate the shipped packs and check generated files for drift.
lint:
    ruff check .
    ruff format --check .
    capy rules validate
    capy rules gen --check

# Regenerate generated files (schema enums, docs/rules.md, docs/tools.md).
gen:
    capy rules gen

# Run every benchmark and print its figures (arguments, e.g. --json, go to each command).
bench *args:
    capy bench rules {{args}}
    capy bench startup {{args}}
    capy bench executor {{args}}
    capy bench redaction {{args}}
    capy bench quality --hybrid {{args}}
    capy bench ablate {{args}}
    capy bench perf --large {{args}}
    capy bench niah {{args}}
    capy bench niah --set real {{args}}
    capy bench hooks {{args}}
    capy bench cli {{args}}
    capy bench peer {{args}}
    capy bench hostile --quick {{args}}
    capy bench memory {{args}}
    capy bench proxy {{args}}
    capy bench recall --hybrid {{args}}
    capy bench hybrid-latency {{args}}
    capy bench capsules-import {{args}}
    capy bench capsules-chaos {{args}}

# Run the MCP server on stdio.
serve:
    capy serve
