"""`capy config ...`: show the resolved configuration and where each value came from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from cyclopts import App, Parameter

app = App(name="config", help="Show capy's resolved configuration.")


@app.command
def show(
    *,
    as_json: Annotated[bool, Parameter(name="--json", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
) -> int:
    """Print every setting, its value (keys masked) and where it came from, and the project
    config keys ignored because they would loosen security.

    Parameters
    ----------
    as_json
        Print JSON instead of a table.
    project
        Resolve for this directory instead of the current one.
    """
    from capy.cli.output import error_line, print_json
    from capy.config import ConfigError, load_settings

    try:
        resolved = load_settings(project)
    except ConfigError as error:
        for line in error.lines:
            error_line(line)
        return 2
    if as_json:
        print_json(_as_json(resolved))
    else:
        _print_table(resolved)
    return 0


def _as_json(resolved: Any) -> dict[str, Any]:
    return {
        "project_root": str(resolved.project_root),
        "files": [{"path": str(path), "exists": path.is_file()} for path in resolved.files],
        "values": {
            entry.key: {"value": entry.value, "source": entry.source}
            for entry in resolved.entries()
        },
        "ignored": [item.as_json() for item in resolved.ignored],
    }


def _print_table(resolved: Any) -> None:
    from capy.cli.output import say
    from capy.cli.tables import Table, print_table

    rows = [[entry.key, _text(entry.value), entry.source] for entry in resolved.entries()]
    print_table(Table(("key", "value", "source"), rows), title="capy configuration")
    say(f"project root: {resolved.project_root}")
    say("config files, lowest precedence first (environment CAPY_* overrides all):")
    for path in resolved.files:
        say(f"  {path}{'' if path.is_file() else '  (not present)'}")
    for item in resolved.ignored:
        say(item.line())


def _text(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value) if value else "(none)"
    return str(value)
