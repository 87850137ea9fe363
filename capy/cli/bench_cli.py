"""`capy bench cli`: CLI command start-up as a ratio to a bare Python start."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.bench import Flag, JsonFlag, _emit


def cli(
    *,
    runs: int = 15,
    only: Annotated[list[str] | None, Parameter(name="--only")] = None,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    check: Flag = False,
) -> int:
    """Time `capy --version`, `--help`, `which`, `rules hash`, `search` and `stats` processes
    against `python -c pass`, interleaved in the same run.

    Parameters
    ----------
    runs
        Processes per command (the median is reported); the baseline is interleaved with them.
    only
        Time only the commands whose first word is this, without dashes (version, help,
        which, rules, search, stats); repeat for several.
    markdown
        Also write the tables as markdown to this file.
    check
        Exit with 1 when a goal is missed.
    """
    from capy.bench import cli as bench
    from capy.cli.output import error_line

    known = {bench.short_name(arguments) for arguments, _ in bench.COMMANDS}
    unknown = sorted(set(only or []) - known)
    if unknown or runs < 1:
        error_line(
            f"--only takes {', '.join(sorted(known))} and --runs a positive count"
            + (f"; {', '.join(unknown)} is not one of them" if unknown else "")
        )
        return 2
    report = bench.run(runs, only)
    code = _emit(report, bench.tables(report), json_output, markdown)
    return 1 if check and not all(goal["met"] for goal in report["goals"]) else code
