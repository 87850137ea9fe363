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
        Print JSON instead of tables.
    project
        Check this project directory instead of the current one.
    """
    from capy.cli.output import print_json
    from capy.doctor import run_doctor

    report = run_doctor(project)
    if as_json:
        print_json(report.to_dict())
    else:
        _print_report(report)
    return 1 if report.failed else 0


def _print_report(report) -> None:
    """One table per section: status (coloured on a terminal), check, detail, and the fix
    under a check that needs one."""
    from capy.cli.tables import Cell, Table, print_markdown, print_table
    from capy.doctor.report import Status, status_label

    print_markdown("# capy doctor")
    for group, checks in report.groups().items():
        rows: list[list[str | Cell]] = []
        for check in checks:
            rows.append(
                [Cell(status_label(check.status), check.status.value), check.name, check.detail]
            )
            if check.fix and check.status is not Status.OK:
                rows.append(["", "", f"fix: {check.fix}"])
        say()
        print_table(Table(["status", "check", "detail"], rows), title=group)
    say()
    print_markdown(f"**Summary:** {report.summary()}")
