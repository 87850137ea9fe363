"""Search on the bulk-built store through the tool call, beside its floor in the same run.

`capy serve` runs on the store `capy.bench.perf_large` built, and the official SDK client calls
`capy_search` over stdio with one query per call. Each call is followed by a call to a bare
SDK server (one no-op tool, the same client) and by the same query as bare FTS5 in this
process, as the in-process table times it: the floor of a call is that query plus that round
trip. The first calls warm the server (imports, the vocabulary read once per process) and are
not counted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from capy.bench import metrics
from capy.bench.mcp_floors import BARE_SDK_SERVER, lift_search_throttle
from capy.bench.perf_calls import WARMUP_CALLS, session, timed_call


def search_through_calls(db: Path, hex_key: str, queries: list[str], conn: Any) -> dict:
    """p50/p95 of `capy_search` per call on the store at `db`, and of its floor."""
    import anyio

    from capy.bench.niah import throwaway_home

    with throwaway_home() as root:
        lift_search_throttle(Path(os.environ["XDG_CONFIG_HOME"]))
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        env = {**os.environ, "CAPY_DB_KEY": hex_key}
        return anyio.run(_calls, project, db, env, queries, conn)


async def _calls(project: Path, db: Path, env: dict, queries: list[str], conn: Any) -> dict:
    from capy.bench.perf import time_bare_query

    capy = [sys.executable, "-m", "capy", "serve", "--project", str(project), "--db", str(db)]
    bare = [sys.executable, "-c", BARE_SDK_SERVER]
    calls, floors = [], []
    async with session(capy, project, env) as server, session(bare, project, env) as floor:
        for number, query in enumerate(queries):
            elapsed = await timed_call(server.call_tool, "capy_search", {"queries": [query]})
            round_trip = await timed_call(floor.call_tool, "noop", {})
            fts = time_bare_query(conn, query)
            if number >= WARMUP_CALLS:
                calls.append(elapsed)
                floors.append(fts + round_trip)
    return {
        "calls": len(calls),
        "call_p50_ms": metrics.percentile(calls, 0.50),
        "call_p95_ms": metrics.percentile(calls, 0.95),
        "call_floor_p50_ms": metrics.percentile(floors, 0.50),
        "call_floor_p95_ms": metrics.percentile(floors, 0.95),
    }
