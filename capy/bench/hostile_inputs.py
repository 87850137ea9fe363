"""Bad inputs tried / tracebacks / "internal error" replies / hangs.

A corpus of hostile inputs, each given to a real capy process (CLI or hook subprocess with its
address space capped, or a real MCP stdio session) under a deadline: device files and FIFOs as
paths, rule overlays built to stall a parser or a regex, broken stores and data folders, a
transcript line nested 100,000 deep, malformed hook payloads, wrong types to every MCP tool.
A run past its deadline is a hang (and is killed); a reply holding a Python traceback or
"internal error" counts as such. Each case is (family, name, runner); runners return Outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from capy.bench.hostile_common import (
    INTERNAL_ERROR,
    Outcome,
    Scratch,
    capy_command,
    run_process,
)
from capy.bench.hostile_input_cases import (
    Case,
    all_cases,
    fifo_path,
    hook_deadline,
    release_fifo,
    scaled_deadline,
)

PARALLEL_CASES = 3  # most of a hang is waiting (a FIFO, a deadline)...
PARALLEL_CPU_CASES = 2  # ...but a parser or regex that hangs burns a core: one per core

# ---- the family ------------------------------------------------------------------------------


def control_cases(scratch: Scratch) -> dict:
    """A traceback and a hang the harness must count, or its zeros mean nothing."""
    import sys

    crash = run_process([sys.executable, "-c", "1 / 0"], env=scratch.env, cwd=scratch.root)
    stall = run_process(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        env=scratch.env,
        cwd=scratch.root,
        deadline=1.0,
    )
    said = run_process(
        [sys.executable, "-c", f"print('capy: {INTERNAL_ERROR} (X)')"],
        env=scratch.env,
        cwd=scratch.root,
    )
    return {"traceback": crash.traceback, "hang": stall.hung, "internal_error": said.internal_error}


def cold_start(scratch: Scratch) -> float:
    """Seconds of one capy start alone with the scratch's caches empty, loading every rule pack
    (a search refused for a --db naming a folder: one sentence, no store opened)."""
    folder = scratch.root / "cold-start"
    folder.mkdir(exist_ok=True)
    # capy writes its caches only into a data folder it already keeps, as a user's has.
    (scratch.home / ".local" / "share" / "capy").mkdir(parents=True, exist_ok=True)
    argv = capy_command("search", "quokka", "--db", str(folder))
    return run_process(argv, env=scratch.env, cwd=scratch.project).seconds


def run(
    scratch: Scratch,
    *,
    quick: bool,
    keep: Callable[[str], bool] | None = None,
    mcp_tools: frozenset[str] | None = None,
) -> dict:
    """Every case (or those whose name `keep` accepts), then the MCP ones: the path cases and
    wrong types to every tool (or to `mcp_tools`; an empty set skips MCP)."""
    import anyio

    from capy.bench import hostile_inputs_mcp

    (scratch.root / "inputs").mkdir(exist_ok=True)
    # The hangs ran past 60 s; a quick run calls 15 s a hang, and runs a few cases at
    # once, most of a hang's time being waiting. Both stretch with a slow cold start (a loaded
    # machine), measured here alone; it also fills the caches every case would otherwise build.
    cold = cold_start(scratch)
    deadline = scaled_deadline(quick, cold)
    every, skipped = all_cases(scratch, deadline, quick)
    cases = [case for case in every if keep is None or keep(case.name)]
    if mcp_tools is None:
        cases += [
            Case(
                "MCP paths",
                f"capy_index {label}",
                lambda path=path: anyio.run(
                    hostile_inputs_mcp.mcp_path, scratch, path or str(fifo_path(scratch)), deadline
                ),
                cpu_bound=path is not None,
                waits=path is None,
            )
            for label, path in hostile_inputs_mcp.MCP_PATHS
        ]
    results: list[tuple[str, str, Outcome]] = []
    lost: set[str] = set()
    waiting = [case for case in cases if case.waits]
    try:
        with ThreadPoolExecutor(max_workers=max(1, len(waiting))) as waiters:
            waited = [waiters.submit(case.run) for case in waiting]
            for busy, workers in ((False, PARALLEL_CASES), (True, PARALLEL_CPU_CASES)):
                batch = [case for case in cases if case.cpu_bound is busy and not case.waits]
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    outcomes = list(pool.map(lambda case: case.run(), batch))
                results += _judged(batch, outcomes, lost)
            results += _judged(waiting, [future.result() for future in waited], lost)
        if mcp_tools is None or mcp_tools:
            for name, outcome in anyio.run(
                hostile_inputs_mcp.mcp_wrong_types, scratch, deadline, mcp_tools
            ):
                results.append(("MCP wrong types", name, outcome))
    finally:
        # Only now: an end of file given earlier would free a FIFO reader still being timed.
        release_fifo(fifo_path(scratch))
    report = _report(results, lost, control_cases(scratch))
    from capy.bench.hostile_full_disk import MIN_DEADLINE

    report["cold_start"] = round(cold, 1)
    report["deadlines"] = {
        "": deadline,
        "hooks": hook_deadline(deadline, quick),
        "full disk": max(deadline, MIN_DEADLINE),
    }
    return {**report, "skipped": skipped}


def _judged(cases: list[Case], outcomes: list[Outcome], lost: set[str]) -> list[tuple]:
    for case, outcome in zip(cases, outcomes, strict=True):
        if case.lost is not None and not outcome.hung and case.lost(outcome):
            lost.add(case.name)
    return [(c.group, c.name, o) for c, o in zip(cases, outcomes, strict=True)]


COUNTS = ("tracebacks", "internal_errors", "hangs", "work_lost")


def _report(results: list[tuple[str, str, Outcome]], lost: set[str], control: dict) -> dict:
    groups: dict[str, dict] = {}
    bad = []
    for group, name, outcome in results:
        row = groups.setdefault(group, {"group": group, "tried": 0, **dict.fromkeys(COUNTS, 0)})
        verdicts = {
            "tracebacks": outcome.traceback,
            "internal_errors": outcome.internal_error,
            "hangs": outcome.hung,
            "work_lost": name in lost,
        }
        row["tried"] += 1
        for key, seen in verdicts.items():
            row[key] += seen
        if any(verdicts.values()):
            why = next(
                key
                for key in ("hangs", "tracebacks", "internal_errors", "work_lost")
                if verdicts[key]
            )
            bad.append({"case": name, "why": WHY[why]})
    totals = {key: sum(row[key] for row in groups.values()) for key in ("tried", *COUNTS)}
    finished = [(o.seconds, name) for _, name, o in results if not o.hung]
    slowest = max(finished, default=(0.0, ""))
    return {
        **totals,
        "rows": list(groups.values()),
        "bad": bad,
        "control_seen": control,
        # What tells a hang from a slow run: how close the slowest finished run came.
        "slowest_finished": {"case": slowest[1], "seconds": round(slowest[0], 1)},
    }


WHY = {
    "hangs": "hang",
    "tracebacks": "traceback",
    "internal_errors": INTERNAL_ERROR,
    "work_lost": "work lost",
}
