"""`capy doctor`: every part of capy checked, with what to do about each problem."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import say


def doctor(
    *,
    as_json: Annotated[bool, Parameter(name="--json", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
) -> int:
    """Check runtimes, SQLCipher and FTS5, config, packs, keys, the knowledge base, agent
    registration (each registered command started as the agent would, from a clean
    environment) and permission policies; exit 1 when any check fails.

    Parameters
    ----------
    as_json
        Print JSON instead of markdown.
    project
        Check this project directory instead of the current one.
    """
    from capy.cli.output import print_json
    from capy.doctor import run_doctor

    report = run_doctor(project)
    if as_json:
        print_json(report.to_dict())
    else:
        say(report.to_markdown(), end="")
    return 1 if report.failed else 0
