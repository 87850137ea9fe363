"""`capy bench hostile`: the red team's figures, measured by attacking capy for real.

Eight families, each in its own module (hostile_escape, hostile_secrets, hostile_inputs,
hostile_terminal, hostile_ssrf, hostile_crash, hostile_spawner, hostile_reach), each run in a
throw-away home
and project, each with a control case that must come out bad (a survivor started outside capy,
a secret with nothing in between, a traceback and a hang, escape sequences printed by a plain
process, a loopback connection made without the guard, a store damaged on purpose, a line
slipped into a spawner of the old kind, another process's memory read by a plain process of
the same user): a harness that cannot
see a bad outcome proves nothing. The goal of every bad count is 0.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from capy.bench.hostile_common import scratch

FAMILIES = ("escape", "secrets", "inputs", "terminal", "ssrf", "crash", "spawner", "reach")
QUICK_CRASH_RUNS = 6
Progress = Callable[[str, int, int], None]


def run(
    *,
    quick: bool = False,
    families: tuple[str, ...] = FAMILIES,
    crash_runs: int | None = None,
    ssrf_data: Path | None = None,
    progress: Progress | None = None,
) -> dict:
    runs = crash_runs if crash_runs is not None else (QUICK_CRASH_RUNS if quick else 20)
    report: dict = {"quick": quick}
    for done, family in enumerate(families):
        if progress is not None:
            progress("hostile families", done, len(families))
        started = time.perf_counter()
        with scratch(prefix=f"capy-hostile-{family}-") as place:
            report[family] = _family(family, place, quick, runs, ssrf_data)
        report[family]["seconds"] = round(time.perf_counter() - started, 1)
    if progress is not None:
        progress("hostile families", len(families), len(families))
    report["goals"] = goals(report)
    return report


def _family(family: str, place, quick: bool, runs: int, ssrf_data: Path | None) -> dict:
    if family == "escape":
        from capy.bench import hostile_escape

        return hostile_escape.run(place, quick=quick)
    if family == "secrets":
        from capy.bench import hostile_secrets

        return hostile_secrets.run(place, quick=quick)
    if family == "inputs":
        from capy.bench import hostile_inputs

        return hostile_inputs.run(place, quick=quick)
    if family == "terminal":
        from capy.bench import hostile_terminal

        return hostile_terminal.run(place, quick=quick)
    if family == "ssrf":
        from capy.bench import hostile_ssrf

        return hostile_ssrf.run(place, quick=quick, data=ssrf_data)
    if family == "spawner":
        from capy.bench import hostile_spawner

        return hostile_spawner.run(place, quick=quick)
    if family == "reach":
        from capy.bench import hostile_reach

        return hostile_reach.run(place, quick=quick)
    from capy.bench import hostile_crash

    return hostile_crash.run(place, runs=runs)


# (family, report key, what the figure counts)
BAD_COUNTS = (
    ("escape", "survived", "escape attempts that survived"),
    ("secrets", "returned_raw", "secrets returned raw"),
    ("inputs", "tracebacks", "bad inputs answered with a traceback"),
    ("inputs", "internal_errors", 'bad inputs answered "internal error"'),
    ("inputs", "hangs", "bad inputs that hung"),
    ("inputs", "work_lost", "bad inputs that lost the user's work"),
    ("terminal", "printed_raw", "control sequences printed raw"),
    ("ssrf", "reached", "SSRF forms that reached loopback"),
    ("crash", "damaged", "kill -9 runs that damaged the store"),
    ("spawner", "got_through", "spawner injections that got through"),
    ("reach", "got_through", "reaches into other processes that got through"),
)


def goals(report: dict) -> list[dict]:
    """A family's figure meets its goal only when the family's control was seen: a count of 0
    from probes that could not tell a bad case from a good one says nothing."""
    rows = []
    seen = controls(report)
    for family, key, label in BAD_COUNTS:
        if family not in report:
            continue
        value = report[family].get(key)
        if not seen.get(family, False):
            rows.append(
                {"goal": f"{label}: 0", "value": f"{value} (void: control not seen)", "met": False}
            )
            continue
        rows.append({"goal": f"{label}: 0", "value": value, "met": value == 0})
    return rows


def controls(report: dict) -> dict[str, bool]:
    """Whether each family's deliberately bad control case was counted as bad."""
    seen = {}
    for family in FAMILIES:
        if family in report:
            control = report[family].get("control_seen")
            seen[family] = all(control.values()) if isinstance(control, dict) else bool(control)
    return seen
