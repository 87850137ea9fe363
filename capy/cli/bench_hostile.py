"""`capy bench hostile`: the red-team figures, each as tried / bad, with a goal of 0 bad."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import DEFAULT_SSRF, Flag, JsonFlag, _emit, _progress
from capy.cli.output import error_line


def hostile(
    *,
    quick: Flag = False,
    only: str = "",
    runs: int | None = None,
    ssrf_data: Path | None = None,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    check: Flag = False,
) -> int:
    """Attack capy as a hostile user would and count what got through.

    Sandbox escapes (cancelled MCP calls included), secrets returned raw per tool, bad inputs
    (tracebacks, "internal error", hangs, work lost), terminal control sequences printed raw,
    SSRF forms that reached loopback, stores damaged by kill -9, and lines or output slipped
    into another call's pre-joined spawner (another server's too), and reaches from one call
    into other processes (servers' memory and environment, ptrace, a running call's pipes,
    live cgroup limits); all on loopback, in throw-away homes, every survivor killed at the end.

    Parameters
    ----------
    quick
        A smaller corpus, a 15 s hang deadline (8 s for a hook, which answers in well under
        one), independent cases at once (about three minutes on a two-core machine, five
        when it is heavily loaded).
    only
        Comma-separated families to run: escape, secrets, inputs, terminal, ssrf, crash,
        spawner, reach (default: all).
    runs
        kill -9 runs (default 20, or 6 with --quick).
    ssrf_data
        Folder holding payloadsallthethings_ssrf_urls.txt (default: ../shared/testdata/ssrf
        beside the repository; derived forms only, with a note, when absent).
    markdown
        Also write the tables as markdown to this file.
    check
        Exit with 1 when a bad count is not 0.
    """
    from capy.bench import hostile as bench
    from capy.bench.report import hostile_tables

    families = tuple(part.strip() for part in only.split(",") if part.strip()) or bench.FAMILIES
    unknown = sorted(set(families) - set(bench.FAMILIES))
    if unknown or (runs is not None and runs < 1):
        error_line(
            f"--only takes {', '.join(bench.FAMILIES)} (got {', '.join(unknown) or only!r}) "
            "and --runs a positive count; fix the option and run again"
        )
        return 2
    with _progress(not json_output) as progress:
        report = bench.run(
            quick=quick,
            families=families,
            crash_runs=runs,
            ssrf_data=ssrf_data or DEFAULT_SSRF,
            progress=progress,
        )
    code = _emit(report, hostile_tables(report), json_output, markdown)
    return 1 if check and not all(goal["met"] for goal in report["goals"]) else code
