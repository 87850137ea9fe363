"""Server start-up: spawn to tools/list answered, for `capy serve` and a bare SDK server.

What an agent waits for before it can call a tool: the process starts, answers `initialize`,
takes `notifications/initialized` and answers `tools/list`. The bare server is an MCPServer of
the same SDK with one trivial tool, started by plain Python: what any server on this SDK pays.
A bare `python -c pass` is timed too, so the table splits each start into the interpreter's
share, the SDK's own share (bare server minus bare Python) and capy's share (capy serve minus
bare server). The three are started in turn, in an order rotated each round, so a busy machine
slows all of them alike; medians over rounds, ratios in the same run. Goal: capy within 1.05x
of the bare SDK server.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from capy.bench.mcp_floors import BARE_SDK_SERVER
from capy.bench.report import Table, fmt

GOAL_RATIO = 1.05
PROTOCOL_VERSION = "2025-06-18"
MESSAGES = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "capy-bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
)
BARE_PYTHON, BARE_SDK, CAPY = "bare python -c pass", "bare SDK server (1 tool)", "capy serve"


def _start_and_list_tools(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Milliseconds from spawn to the tools/list answer (for a plain interpreter: to exit)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        if argv[-1] == "pass":
            process.communicate(timeout=60)
            return (time.perf_counter() - start) * 1000
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES).encode())
        process.stdin.flush()
        for _ in MESSAGES[::2]:  # one answer per request: initialize, then tools/list
            answer = process.stdout.readline()
            if b'"result"' not in answer:
                raise RuntimeError(f"{argv[0]} did not answer: {answer[:200]!r}")
        elapsed = (time.perf_counter() - start) * 1000
        if b'"tools"' not in answer:
            raise RuntimeError(f"{argv[0]} sent no tool list: {answer[:200]!r}")
        return elapsed
    finally:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
        process.wait(timeout=60)


def run(runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="capy-bench-startup-") as folder:
        project = Path(folder)
        (project / ".git").mkdir()
        env = {**os.environ, "CAPY_DB_KEY": "0" * 64}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed capy has its bytecode cached
        starts = {
            BARE_PYTHON: [sys.executable, "-c", "pass"],
            BARE_SDK: [sys.executable, "-c", BARE_SDK_SERVER],
            CAPY: [sys.executable, "-m", "capy", "serve", "--db", str(project / "kb.db")],
        }
        samples: dict[str, list[float]] = {name: [] for name in starts}
        order = list(starts)
        for name in order:  # warm: bytecode, the key, the caches a second start finds
            _start_and_list_tools(starts[name], project, env)
        for round_index in range(max(1, runs)):
            shift = round_index % len(order)
            for name in order[shift:] + order[:shift]:
                samples[name].append(_start_and_list_tools(starts[name], project, env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    sdk = medians[BARE_SDK]
    ratio = medians[CAPY] / sdk if sdk else None
    return {
        "runs": runs,
        "baseline": BARE_SDK,
        "results": [
            {
                "name": name,
                "median_ms": round(medians[name], 2),
                "p95_ms": round(_p95(samples[name]), 2),
                "ratio_to_baseline": round(medians[name] / sdk, 3) if sdk else None,
            }
            for name in starts
        ],
        "shares_ms": {
            "python": round(medians[BARE_PYTHON], 2),
            "sdk": round(sdk - medians[BARE_PYTHON], 2),
            "capy": round(medians[CAPY] - sdk, 2),
        },
        "goals": [
            {
                "goal": f"capy serve spawn to tools/list <= {GOAL_RATIO:g}x the bare SDK server",
                "value": round(ratio, 3) if ratio is not None else None,
                "met": ratio is not None and ratio <= GOAL_RATIO,
            }
        ],
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def tables(report: dict) -> list[Table]:
    from capy.bench.report import goals_table

    table = Table(
        f"MCP server start, spawn to tools/list answered (median of {report['runs']} rounds)",
        ("start", "median ms", "p95 ms", "x bare SDK server"),
    )
    for row in report["results"]:
        table.rows.append(
            (
                row["name"],
                f"{row['median_ms']:.0f}",
                f"{row['p95_ms']:.0f}",
                fmt(row["ratio_to_baseline"], 2),
            )
        )
    shares = report["shares_ms"]
    table.notes.append(
        f"shares of capy's start: interpreter {shares['python']:.0f} ms, "
        f"SDK {shares['sdk']:.0f} ms, capy {shares['capy']:.0f} ms"
    )
    return [table, goals_table("goal", report["goals"])]
