"""CLI start-up: the median wall time of a `capy ...` process per command, as a ratio to a bare
`python -c pass` of the same interpreter, measured interleaved in the same run.

The run uses a throw-away project and home (shipped packs, default settings) whose knowledge
base holds one small indexed text, and warms each command once first, as a person's second
command finds the caches and bytecode of the first. Goals: the one-line answers (`--version`,
`--help`, `which`, `rules hash`) within 3x a bare start; `search` and `stats` within 5x.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from capy.bench import processes

# (arguments, goal ratio): what a person runs at a prompt, with the ratio it must stay within.
COMMANDS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("--version",), 3.0),
    (("--help",), 3.0),
    (("which",), 3.0),
    (("rules", "hash"), 3.0),
    (("search", "retention policy"), 5.0),
    (("stats",), 5.0),
)
SEED_TEXT = (
    b"# Notes\n\nThe retention policy keeps durable sources and expires ephemeral ones.\n"
    b"Session sources expire after their TTL; reindex rebuilds stale rows.\n"
)


def run(runs: int = 15, only: list[str] | None = None) -> dict:
    """`only` keeps the commands whose short name is listed (the test times a slice)."""
    chosen = [item for item in COMMANDS if only is None or short_name(item[0]) in only]
    scratch = Path(tempfile.mkdtemp(prefix="capy-bench-cli-"))
    try:
        return _run(scratch, max(1, runs), chosen)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def short_name(arguments: tuple[str, ...]) -> str:
    """`--version` -> `version`: a name `--only` can take without cyclopts reading a flag."""
    return arguments[0].lstrip("-")


def _run(scratch: Path, runs: int, chosen: list[tuple[tuple[str, ...], float]]) -> dict:
    project, _home, environ = processes.scratch_project(scratch)
    base = processes.capy_command()
    seed = [*base, "index", "-", "--source", "notes"]
    processes.timed_process(seed, SEED_TEXT, environ, project)
    cases = [(" ".join(arguments), [*base, *arguments], b"") for arguments, _ in chosen]
    for _name, command, stdin in cases:  # warm: caches, bytecode, the key file
        processes.timed_process(command, stdin, environ, project)
    samples = processes.interleaved(cases, runs, environ, project)
    bare = statistics.median(samples[processes.BASELINE])
    rows = [processes.summary_row(name, samples[name], bare) for name, _, _ in cases]
    goals = [
        {
            "goal": f"capy {row['name']} median <= {goal:g}x bare Python",
            "value": row["ratio"],
            "met": row["ratio"] is not None and row["ratio"] <= goal,
        }
        for row, (_arguments, goal) in zip(rows, chosen, strict=True)
    ]
    return {
        "runs": runs,
        "baseline": processes.baseline_name(),
        "baseline_ms": round(bare, 2),
        "command": processes.shown_command(base),
        "results": rows,
        "goals": goals,
    }


def tables(report: dict) -> list:
    from capy.bench.report import goals_table

    table = processes.ratio_table(report, "CLI start-up", "command")
    table.notes.append(f"command: {report['command']} ARGS, in a throw-away project and home")
    return [table, goals_table("goal", report["goals"])]
