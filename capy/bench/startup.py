"""Server start-up: spawn to initialize-answered, for `capy serve` and a bare SDK server.

The bare server is an MCPServer with no tools started by plain Python: what any server on this
SDK pays. The ratio is what capy adds on top (its CLI, its tools, its lazy imports).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from capy.bench.report import Table, fmt
from capy.bench.timing import measure

BARE_SERVER = "from mcp.server.mcpserver import MCPServer\nMCPServer('bare').run()\n"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "capy-bench", "version": "1"},
    },
}


def _start_and_initialize(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        answer = process.stdout.readline()
        if b'"result"' not in answer:
            raise RuntimeError(f"{argv[0]} did not answer initialize: {answer[:200]!r}")
    finally:
        process.stdin.close()
        process.wait(timeout=60)


def run(runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="capy-bench-startup-") as folder:
        project = Path(folder)
        env = {**os.environ, "CAPY_DB_KEY": "0" * 64}
        capy = [sys.executable, "-m", "capy", "serve", "--db", str(project / "kb.db")]
        bare = [sys.executable, "-c", BARE_SERVER]
        baseline = measure(
            "bare SDK server", lambda: _start_and_initialize(bare, project, env), runs
        )
        server = measure("capy serve", lambda: _start_and_initialize(capy, project, env), runs)
    return {
        "runs": runs,
        "baseline": baseline.name,
        "results": [
            {**timing.__dict__, "ratio_to_baseline": timing.median_ms / baseline.median_ms}
            for timing in (baseline, server)
        ],
    }


def tables(report: dict) -> list[Table]:
    table = Table(
        f"MCP server start to initialize answered (median of {report['runs']} runs)",
        ("server", "median ms", "p95 ms", "x bare SDK server"),
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
    return [table]
