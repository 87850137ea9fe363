"""`capy rules ...`: validate, list, show, test, hash and document the rule packs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from cyclopts import App, Parameter

from capy.cli.output import console, error_line, print_json, say

app = App(name="rules", help="Validate, inspect and document the rule packs.")

Format = Literal["text", "json"]
FormatOption = Annotated[
    Format,
    Parameter(name="--format", help="text for people, json for machines (the same fields)."),
]
JsonFlag = Annotated[bool, Parameter(name="--json", negative=(), help="Print JSON.")]
# The MCP tools' reference, generated from the registered tools (`python -m capy.server.docs`).
TOOLS_DOC = Path("docs/tools.md")


def _candidates(paths: list[Path]) -> list[tuple[Path, str]]:
    from capy.rules.ruleset import files_in, overlay_candidates

    if not paths:
        return overlay_candidates()
    found: list[tuple[Path, str]] = []
    for path in paths:
        found.extend((item, "path") for item in (files_in(path) if path.is_dir() else [path]))
    return found


def _ruleset(paths: list[Path] | None = None, examples: bool = False):
    from capy.rules.ruleset import build_ruleset

    return build_ruleset(_candidates(paths or []), examples=examples)


@app.command
def validate(
    paths: list[Path] | None = None,
    *,
    format: Annotated[Format, Parameter(name="--format")] = "text",
    verbose: Annotated[bool, Parameter(name=["--verbose", "-v"])] = False,
) -> int:
    """Check packs: strict YAML, schema, semantic lint and every rule's examples.

    With no PATHS, checks the shipped packs plus the user and project overlays in force.
    Exits 0 when clean (warnings allowed) and 1 on any error.

    Parameters
    ----------
    paths
        Pack or overlay files, or folders of them, to check with the shipped packs.
    format
        `text` for people, `json` for machines (same fields).
    verbose
        Show every schema error, not only the most relevant one per file.
    """
    from capy.rules.diagnostics import render_json, render_text

    ruleset = _ruleset(paths, examples=True)
    if format == "json":
        say(render_json(ruleset.diagnostics), redact=False)
    elif ruleset.diagnostics:
        say(render_text(ruleset.diagnostics, verbose=verbose), redact=False)
    else:
        report = ruleset.examples
        checked = f"{len(ruleset.files)} files, {len(ruleset.packs)} packs"
        if report:
            checked += f", {report.rules} detecting rules, {report.examples} examples"
        say(f"ok: {checked}", redact=False)
    return 0 if ruleset.ok else 1


@app.command
def test(*, format: FormatOption = "text") -> int:
    """Run every rule's `examples` (match and no_match) and report failures."""
    from capy.rules.diagnostics import render_json, render_text
    from capy.rules.lint import run_examples

    ruleset = _ruleset()
    errors = [item for item in ruleset.diagnostics if item.is_error]
    if errors:
        say(render_text(errors), redact=False)
        error_line("fix the errors above before the examples can run")
        return 1
    report = run_examples(ruleset.packs.values())
    if format == "json":
        say(render_json(report.failures), redact=False)
    elif report.failures:
        say(render_text(report.failures, verbose=True), redact=False)
    else:
        say(f"ok: {report.rules} rules, {report.examples} examples passed", redact=False)
    return 0 if not report.failures else 1


def _loaded():
    from capy.rules.ruleset import RulesError, build_ruleset

    ruleset = build_ruleset(_candidates([]))
    if not ruleset.ok:
        raise RulesError(ruleset.diagnostics)
    return ruleset


@app.command(name="list")
def list_packs(*, json_output: JsonFlag = False) -> int:
    """List the packs in force with their version, rule count and overlays, and the project
    overlays and config keys ignored because they would loosen security."""
    from capy.cli.tables import Table, print_table
    from capy.rules.overlays import iter_rules

    ruleset = _loaded()
    rows = []
    for name in sorted(ruleset.packs):
        pack = ruleset.packs[name]
        rules = list(iter_rules(pack.data))
        rows.append(
            {
                "pack": name,
                "version": pack.data.get("version"),
                "schema": pack.data.get("schema"),
                "rules": len(rules),
                "shapes_index": bool(pack.data.get("shapes_index")),
                "file": pack.base.file,
                "overlays": [overlay.file for overlay in pack.overlays],
                "description": pack.data.get("description"),
            }
        )
    ignored = [*ruleset.ignored, *_ignored_config()]
    if json_output:
        print_json(
            {
                "index_version": ruleset.index_version,
                "packs": rows,
                "ignored": [item.as_json() for item in ignored],
            }
        )
        return 0
    cells = [
        [
            row["pack"],
            str(row["version"]),
            str(row["rules"]),
            "yes" if row["shapes_index"] else "",
            ", ".join(row["overlays"]),
        ]
        for row in rows
    ]
    columns = ("pack", "version", "rules", "shapes index", "overlays")
    title = f"rule packs (index_version {ruleset.index_version})"
    print_table(Table(columns, cells, frozenset({2})), title=title, redact=False)
    for item in ignored:
        say(item.line(), redact=False)
    return 0


def _ignored_config():
    """Project config keys left out as loosening; a broken config is `capy config show`'s to
    report, and the packs listed above loaded without it."""
    from capy.config import ConfigError, load_settings

    try:
        return list(load_settings().ignored)
    except ConfigError:
        return []


@app.command
def show(pack: str, *, json_output: JsonFlag = False) -> int:
    """Show one pack as merged with its overlays: header, sections and rules.

    Parameters
    ----------
    pack
        The pack name, such as `secrets`.
    """
    from rich.table import Table

    from capy.rules.overlays import iter_rules

    ruleset = _loaded()
    if pack not in ruleset.packs:
        error_line(f"no pack named {pack!r}; `capy rules list` shows the packs in force")
        return 2
    merged = ruleset.packs[pack]
    if json_output:
        print_json(merged.data)
        return 0
    data = merged.data
    console().print(f"[bold]{pack}[/bold] {data.get('version')}  ({merged.base.file})")
    console().print(str(data.get("description", "")))
    if merged.overlays:
        console().print("overlays: " + ", ".join(overlay.file for overlay in merged.overlays))
    for item in ruleset.ignored:
        if item.target == pack:
            console().print(item.line(), markup=False, soft_wrap=True)
    table = Table()
    for column in ("id", "status", "kind", "description"):
        table.add_column(column, overflow="fold")
    for rule_id, path in iter_rules(data):
        node = data
        for part in path:
            node = node[part]
        table.add_row(
            rule_id,
            str(node.get("status")),
            str(node.get("kind", "")),
            str(node.get("description", "")),
        )
    console().print(table)
    return 0


@app.command(name="hash")
def hash_command(*, json_output: JsonFlag = False) -> int:
    """Print index_version: the canonical hash of the packs that shape the index."""
    from capy.canonical import canonical_json
    from capy.rules import load_rules
    from capy.rules.hashing import pack_fingerprint

    # The rules in force as every other command reads them: from the compiled-rules cache,
    # keyed by the bytes of every pack, schema and overlay, so an edit is never missed.
    ruleset = load_rules()
    if json_output:
        import hashlib

        shaping = {
            name: hashlib.sha256(canonical_json(pack_fingerprint(pack)).encode()).hexdigest()[:16]
            for name, pack in sorted(ruleset.packs.items())
            if pack.data.get("shapes_index") is True
        }
        print_json({"index_version": ruleset.index_version, "packs": shaping})
    else:
        say(ruleset.index_version, redact=False)
    return 0


@app.command
def docs(
    *,
    output: Path = Path("docs/rules.md"),
    check: bool = False,
) -> int:
    """Write the rules reference generated from the packs and schemas.

    Parameters
    ----------
    output
        Where to write it.
    check
        Do not write; exit 1 when the file differs from what would be generated.
    """
    from capy.rules.docs import render_rules_doc
    from capy.rules.ruleset import build_ruleset

    text = render_rules_doc(build_ruleset(include_shipped=True))
    return _write_or_check(output, text, check, "capy rules docs")


@app.command
def gen(*, check: bool = False) -> int:
    """Regenerate every generated file: the matcher-kind enum in the schemas, the general-English
    word list of the search pack's vocabulary model, docs/rules.md and docs/tools.md.

    Parameters
    ----------
    check
        Do not write; exit 1 if any generated file is out of date.
    """
    from capy.api.intent_specific import general_words_path, general_words_text
    from capy.rules import build_ruleset
    from capy.rules.generate import common_schema_path, common_schema_text

    status = _write_or_check(common_schema_path(), common_schema_text(), check, "capy rules gen")
    model = build_ruleset().view("search").intents.specific.vocabulary_model
    if model is not None:
        words = _write_or_check(
            general_words_path(model), general_words_text(model), check, "capy rules gen"
        )
        status = max(status, words)
    status = max(status, docs(check=check))
    from capy.server.docs import render_tools_markdown

    tools = _write_or_check(TOOLS_DOC, render_tools_markdown(), check, "capy rules gen")
    return max(status, tools)


def _write_or_check(path: Path, text: str, check: bool, command: str) -> int:
    current = path.read_text(encoding="utf-8") if path.exists() else None
    shown = _shown(path)
    if check:
        if current != text:
            error_line(f"{shown} is out of date; run `{command}` and commit the result")
            return 1
        say(f"{shown} is up to date", redact=False)
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    if current != text:
        path.write_text(text, encoding="utf-8")
        say(f"wrote {shown}", redact=False)
    else:
        say(f"{shown} unchanged", redact=False)
    return 0


def _shown(path: Path) -> str:
    """Paths relative to the working directory when they are inside it (through links too)."""
    for candidate in (path, path.resolve()):
        try:
            return str(candidate.absolute().relative_to(Path.cwd().resolve()))
        except ValueError:
            continue
    return str(path)
