"""Fresh-process timing against a bare `python -c pass` of the same interpreter, interleaved.

Used by the benchmarks that time what a person or an agent waits for when it starts capy (a
hook, a CLI command). Each round runs the baseline and every case once, in an order rotated
each round: whichever process runs first after a pause pays for it, and that must not always be
the same one. Medians over rounds, ratios to the baseline measured in the same run, so a busy
machine slows both sides alike.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BASELINE = "bare"


def capy_command() -> list[str]:
    """The installed console script when there is one (what hosts and people run), else the
    same entry through this interpreter."""
    script = Path(sys.executable).with_name("capy")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from capy.entry import run; sys.exit(run())"]


def shown_command(command: list[str]) -> str:
    return " ".join(Path(part).name if index == 0 else part for index, part in enumerate(command))


def bare_command() -> list[str]:
    return [sys.executable, "-c", "pass"]


def baseline_name() -> str:
    return f"{Path(sys.executable).name} -c pass"


def isolated_environment(home: Path) -> dict[str, str]:
    """This environment with a throw-away home: no CAPY_ or XDG_ settings of the user's."""
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("CAPY_", "XDG_"))
    }
    environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed capy has its bytecode cached
    environ.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )
    return environ


def scratch_project(scratch: Path) -> tuple[Path, Path, dict[str, str]]:
    """(project, home, environment) inside `scratch`: a `.git` folder marks the project root."""
    project, home = scratch / "project", scratch / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    return project, home, isolated_environment(home)


def timed_process(command: list[str], stdin: bytes, environ: dict[str, str], cwd: Path) -> float:
    """Wall milliseconds from spawn to exit, output captured (and dropped)."""
    start = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, env=environ, cwd=cwd, check=False)
    return (time.perf_counter() - start) * 1000


def interleaved(
    cases: list[tuple[str, list[str], bytes]],
    runs: int,
    environ: dict[str, str],
    cwd: Path,
    environs: dict[str, dict[str, str]] | None = None,
    settle: Callable[[], None] | None = None,
) -> dict[str, list[float]]:
    """Samples per case name, plus BASELINE, from `runs` rotated rounds; `environs` gives some
    cases an environment of their own (the same command with a setting changed); `settle`, when
    given, runs untimed after each process (waiting for background work it started)."""
    environs = environs or {}
    samples: dict[str, list[float]] = {BASELINE: [], **{name: [] for name, _, _ in cases}}
    order = [(BASELINE, bare_command(), b""), *cases]
    for round_index in range(runs):
        shift = round_index % len(order)
        for name, command, stdin in order[shift:] + order[:shift]:
            samples[name].append(timed_process(command, stdin, environs.get(name, environ), cwd))
            if settle is not None:
                settle()
    return samples


def summary_row(name: str, samples: list[float], baseline_ms: float) -> dict:
    ordered = sorted(samples)
    median = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "name": name,
        "median_ms": round(median, 2),
        "p95_ms": round(p95, 2),
        "ratio": round(median / baseline_ms, 2) if baseline_ms else None,
    }


def ratio_table(report: dict, title: str, column: str):
    """One row per case: median, p95 and the ratio to the baseline measured with it."""
    from capy.bench.report import Table, fmt

    table = Table(
        f"{title}, median of {report['runs']} processes "
        f"(baseline: {report['baseline']} = {report['baseline_ms']:.1f} ms)",
        (column, "median ms", "p95 ms", "x baseline"),
    )
    for row in report["results"]:
        table.rows.append(
            (row["name"], f"{row['median_ms']:.1f}", f"{row['p95_ms']:.1f}", fmt(row["ratio"], 2))
        )
    return table
