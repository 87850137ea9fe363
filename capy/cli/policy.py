"""`capy policy check`: which permission rule decides a command, a path or a URL, and where it is.

For people debugging their Claude Code settings: it reads the same files, in the same
precedence, with the same deny > ask > allow order, plus capy's built-in policies.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from capy.cli.output import say

app = App(name="policy", help="Check commands, paths and URLs against the permission rules.")

# What "none" means for the agent: Claude Code's defaults when no rule matches.
_NONE_MEANS = "no rule decides; the agent's default applies (Claude Code asks for Bash and edits)"


@app.command
def check(
    command: Annotated[str | None, Parameter(allow_leading_hyphen=True)] = None,
    /,
    *,
    tool: Annotated[str | None, Parameter(name="--tool")] = None,
    path: Annotated[str | None, Parameter(name="--path")] = None,
    url: Annotated[str | None, Parameter(name="--url")] = None,
    language: Annotated[str, Parameter(name="--language")] = "shell",
    as_json: Annotated[bool, Parameter(name="--json", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
    managed_dir: Annotated[Path | None, Parameter(name="--managed-dir")] = None,
) -> int:
    """Print the decision (allow, ask, deny or none), the rule that made it and its file.

    Parameters
    ----------
    command
        The shell command (or code, with --language) to judge; `-` reads it from stdin.
    tool
        The tool being called: Bash, Read, Edit, Write, WebFetch, or any tool name (default:
        Read with --path, WebFetch with --url, else Bash).
    path
        The file path a Read, Edit or Write call touches.
    url
        The URL a WebFetch call fetches.
    language
        Judge COMMAND as code in this language: its embedded shell calls are checked.
    as_json
        Print JSON instead of text.
    project
        Judge for this project directory instead of the current one.
    managed_dir
        Read enterprise managed settings from this folder instead of the system's.
    """
    from capy.cli.output import error_line, print_json

    if command == "-":
        command = sys.stdin.read()
    try:
        decision = _decide(command, tool, path, url, language, project, managed_dir)
    except ValueError as error:
        error_line(f"{error}.")
        return 2
    if as_json:
        print_json(decision.as_dict())
    else:
        _print_text(decision)
    return 0


def _decide(command, tool, path, url, language, project, managed_dir):
    from capy.security import check_command, check_tool

    tool = tool or ("Read" if path is not None else "WebFetch" if url is not None else "Bash")
    if tool == "Bash":
        if command is None:
            raise ValueError('give the command to check, e.g. capy policy check "git push"')
        if tool != "Bash":
            raise ValueError(f"a command is judged as Bash; drop --tool {tool} or the command")
        return check_command(
            command, project_dir=project, language=language, managed_dir=managed_dir
        )
    return check_tool(tool, path=path, url=url, project_dir=project, managed_dir=managed_dir)


def _print_text(decision) -> None:
    lines = [f"{decision.decision}"]
    fields = (
        ("rule", decision.rule),
        ("file", decision.source),
        ("part", decision.part),
        ("reason", decision.reason or (_NONE_MEANS if decision.decision == "none" else None)),
    )
    lines.extend(f"  {name:<7}{value}" for name, value in fields if value)
    say("\n".join(lines))
