"""`capy bench capsules-chaos`: capture in parallel, kill pipeline workers mid-job, count."""

from __future__ import annotations

from capy.cli.bench import JsonFlag


def capsules_chaos(
    *, processes: int = 8, per_process: int = 150, kills: int = 20, json_output: JsonFlag = False
) -> int:
    """Nothing lost: capsules once, chains verify, every capsule derived after kill -9s.

    Parameters
    ----------
    processes
        Capture processes writing at once.
    per_process
        Capsules each capture process writes.
    kills
        Pipeline workers started and killed with SIGKILL while holding leased jobs.
    """
    from capy.bench.capsules_chaos import run
    from capy.cli.output import error_line, print_json, say

    if processes < 1 or per_process < 1 or kills < 0:
        error_line("--processes and --per-process must be at least 1, --kills at least 0")
        return 2
    report = run(processes, per_process, kills)
    if json_output:
        print_json({**report.__dict__, "ok": report.ok})
    else:
        for line in report.lines():
            say(line)
    return 0 if report.ok else 1
