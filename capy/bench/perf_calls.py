"""Through the tool call: search, execute and stats as an agent calls them, against real floors.

One store is built from real text (the shared test data and this repository's own files, cut
into sources of at most `PIECE_BYTES`), then `capy serve` runs on it and the official SDK
client calls it over stdio, one call at a time:
- `capy_search` with one query per call; floor: the same query's words as a bare FTS5 AND
  query ranked by bm25 (sqlcipher3 in this process, on the same file, warm) plus a bare SDK
  round trip: a trivial Python MCP server with one no-op tool, driven by the same client.
  Goal: capy's p50 per call <= `SEARCH_GOAL_RATIO` x (bare FTS5 p50 + bare SDK p50).
- `capy_execute` of `echo hi`; floor: the same command as a bare subprocess plus the bare SDK
  round trip (reported, no goal here).
- `capy_stats`; goal: under `STATS_GOAL_MS` per call. In process on the same store, the report
  as it was computed before the counters (a recount of chunks, every source's raw content
  read for its tier) is timed beside today's, so the before/after is one run, one file.
Calls alternate between capy and the floors call by call, so a slow moment of the machine
lands on both. A user overlay in the throwaway HOME lifts the search throttle: a benchmark is a
burst of calls the throttle exists to stop, and a refused search measures nothing.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from capy.bench import metrics
from capy.bench.mcp_floors import BARE_SDK_SERVER, lift_search_throttle
from capy.bench.report import Table, fmt, goals_table
from capy.bench.server_cpu import CallCpu, child_with

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_TESTDATA = REPO_ROOT.parent / "shared" / "testdata"
REPO_TEXT = ("capy", "docs", "rules", "schemas", "tests", "fixtures")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".json", ".jsonl", ".txt", ".trec", ".tsv", ".toml"}
# Sources the size of a long command output or a docs page, so the store holds many of them.
PIECE_BYTES = 64_000
SEARCH_GOAL_RATIO = 2.0
STATS_GOAL_MS = 20.0
WARMUP_CALLS = 5
# The calls timed through MCP, in the order each round makes them.
_TIMED = ("search", "bare_sdk", "execute", "stats")
# What tells the bare SDK server's process apart from the others this process started.
BARE_SDK_MARKER = b"MCPServer('bare')"
_WORD = re.compile(r"[A-Za-z]{5,}")
Progress = Callable[[str, int, int], None]


def run_calls(
    *, calls: int = 60, megabytes: float = 5.0, seed: int = 1, progress: Progress | None = None
) -> dict:
    """Build the store, time the three tools through MCP and their floors; the report dict."""
    import anyio

    from capy.bench.niah import throwaway_home

    with throwaway_home() as root:
        lift_search_throttle(Path(os.environ["XDG_CONFIG_HOME"]))
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        db = root / "kb" / "knowledge.db"
        built = _build_store(project, db, megabytes, progress)
        queries = _queries(built.pop("texts"), calls + WARMUP_CALLS, seed)
        stats = _stats_in_process(project, db, built["key"])
        env = {**os.environ, "CAPY_DB_KEY": built.pop("key").raw.hex()}
        timed = anyio.run(_through_mcp, project, db, env, queries, calls, progress)
        floors = _bare_floors(db, env["CAPY_DB_KEY"], queries, calls)
    result = {**built, "calls": calls, "stats": stats, **timed, **floors}
    result["goals"] = _goals(result)
    return result


# ---- the store -----------------------------------------------------------------------------


def _text_files() -> Iterator[Path]:
    roots = [SHARED_TESTDATA] if SHARED_TESTDATA.is_dir() else []
    roots += [REPO_ROOT / name for name in REPO_TEXT if (REPO_ROOT / name).is_dir()]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts:
                yield path


def _pieces(text: str) -> Iterator[str]:
    piece, size = [], 0
    for line in text.splitlines(keepends=True):
        piece.append(line)
        size += len(line)
        if size >= PIECE_BYTES:
            yield "".join(piece)
            piece, size = [], 0
    if piece:
        yield "".join(piece)


def _build_store(project: Path, db: Path, megabytes: float, progress: Progress | None) -> dict:
    from capy.rules import load_rules
    from capy.store.content import ContentError
    from capy.store.indexing import index_content

    rules = load_rules(project)
    target = int(megabytes * 1_000_000)
    texts: list[str] = []
    total = sources = 0
    started = time.perf_counter()
    store, key = _open_store(db, project)
    with store:
        for path in _text_files():
            if total >= target:
                break
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, piece in enumerate(_pieces(text)):
                try:
                    index_content(store, piece, label=f"{path.name}#{number}", rules=rules)
                except ContentError:
                    continue  # binary-looking or empty: not what this store is for
                texts.append(piece)
                total += len(piece.encode())
                sources += 1
            if progress:
                progress("indexing real text for the tool-call store", min(total, target), target)
        from capy.store.maintenance import checkpoint

        checkpoint(store.conn)
    return {
        "key": key,
        "texts": texts,
        "sources": sources,
        "raw_bytes": total,
        "store_bytes": db.stat().st_size,
        "build_s": time.perf_counter() - started,
        "text_from": "shared test data + repository files"
        if SHARED_TESTDATA.is_dir()
        else "repository files",
    }


def _open_store(db: Path, project: Path, key: Any = None) -> tuple[Any, Any]:
    """The benchmark's own file under a throwaway key (never the user's store or key file)."""
    from capy.bench.scratch import scratch_key
    from capy.store import Store, StoreLocation, open_database

    key = key or scratch_key()
    conn = open_database(db, key, notify=lambda _message: None)
    return Store(conn=conn, location=StoreLocation(db, project, key.source), key=key), key


def _queries(texts: list[str], count: int, seed: int) -> list[str]:
    """Two neighbouring words of five letters or more from a random place in the store."""
    rng = random.Random(seed)
    queries: list[str] = []
    while len(queries) < count and texts:
        text = rng.choice(texts)
        start = rng.randrange(max(len(text) - 400, 1))
        words = _WORD.findall(text[start : start + 400])
        if len(words) >= 2:
            index = rng.randrange(len(words) - 1)
            queries.append(f"{words[index]} {words[index + 1]}")
    return queries


# ---- capy_stats in process, before and after the counters ----------------------------------


def _stats_in_process(project: Path, db: Path, key: Any) -> dict:
    from capy.rules import load_rules
    from capy.store.counters import total_chunks
    from capy.store.retention import summarize_sources

    rules = load_rules(project)
    store, _ = _open_store(db, project, key)
    with store:
        before_ms = _median_ms(lambda: _report_by_full_scan(store, rules), 3)
        started = time.perf_counter()
        summarize_sources(store, rules=rules)  # the first report fills the saliences
        first_ms = (time.perf_counter() - started) * 1000

        def after() -> None:
            summarize_sources(store, rules=rules)
            total_chunks(store.conn)

        after_ms = _median_ms(after, 9)
    return {"before_ms": before_ms, "first_after_ms": first_ms, "after_ms": after_ms}


def _report_by_full_scan(store: Any, rules: Any) -> None:
    """What a stats report computed before the counters: chunks counted, and every source's
    raw content read and scored for its tier."""
    from capy.store.codec import decompress_text
    from capy.store.retention import _all_facts, retention_score, tier_of

    pack = rules.view("retention")
    now = int(time.time())
    tiers: Counter[tuple[str, str]] = Counter()
    for facts in _all_facts(store.conn):
        raw = store.conn.execute("SELECT raw FROM sources WHERE id = ?", (facts.id,)).fetchone()
        text = pack.salience.sample(decompress_text(raw[0]))
        tiers[facts.kind, str(tier_of(retention_score(facts, text, pack=pack, now=now), pack))] += 1
    store.conn.execute("SELECT count(*) FROM chunks").fetchone()


def _median_ms(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


# ---- through MCP ---------------------------------------------------------------------------


@asynccontextmanager
async def session(argv: list[str], cwd: Path, env: dict[str, str]):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd), env=env)
    with open(os.devnull, "w") as log:
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=120) as client:
            yield client


async def timed_call(call: Callable[..., Any], *arguments: Any) -> float:
    started = time.perf_counter()
    result = await call(*arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if getattr(result, "is_error", False):
        texts = [block.text for block in result.content if block.type == "text"]
        raise RuntimeError(f"a benchmark call failed: {' '.join(texts)[:300]}")
    return elapsed


async def _through_mcp(
    project: Path, db: Path, env: dict, queries: list[str], calls: int, progress: Progress | None
) -> dict:
    capy = [sys.executable, "-m", "capy", "serve", "--project", str(project), "--db", str(db)]
    bare = [sys.executable, "-c", BARE_SDK_SERVER]
    walls: dict[str, list[float]] = {name: [] for name in _TIMED}
    cpus: dict[str, list[float]] = {name: [] for name in _TIMED}
    echo = {"language": "shell", "code": "echo hi"}
    async with session(capy, project, env) as server, session(bare, project, env) as floor:
        capy_cpu = CallCpu(child_with(b"capy\0serve"))
        floor_cpu = CallCpu(child_with(BARE_SDK_MARKER))
        for number, query in enumerate(queries):
            timed = (
                ("search", capy_cpu, server.call_tool, "capy_search", {"queries": [query]}),
                ("bare_sdk", floor_cpu, floor.call_tool, "noop", {}),
                ("execute", capy_cpu, server.call_tool, "capy_execute", echo),
                ("stats", capy_cpu, server.call_tool, "capy_stats", {}),
            )
            for name, cpu, call, tool, arguments in timed:
                cpu.start()
                elapsed = await timed_call(call, tool, arguments)
                used = cpu.stop()
                if number >= WARMUP_CALLS:  # the first calls warm caches and imports
                    walls[name].append(elapsed)
                    if used is not None:
                        cpus[name].append(used)
            if progress:
                progress("tool calls through MCP", number + 1, len(queries))
    return {
        **{f"{name}_ms": _spread(samples) for name, samples in walls.items()},
        **{f"{name}_cpu_ms": _cpu_spread(samples) for name, samples in cpus.items()},
    }


def _cpu_spread(samples: list[float]) -> dict | None:
    """CPU per call (None where the platform gives no figure)."""
    if not samples:
        return None
    return {**_spread(samples), "mean": statistics.fmean(samples)}


def _spread(samples: list[float]) -> dict:
    return {"p50": metrics.percentile(samples, 0.50), "p95": metrics.percentile(samples, 0.95)}


# ---- floors in process ---------------------------------------------------------------------


def _bare_floors(db: Path, hex_key: str, queries: list[str], calls: int) -> dict:
    import sqlcipher3

    conn = sqlcipher3.connect(str(db), isolation_level=None)
    conn.execute(f"PRAGMA key = \"x'{hex_key}'\"")
    fts, fts_cpu = [], []
    for number, query in enumerate(queries):
        match = " ".join(f'"{word}"' for word in query.split())
        started, cpu_started = time.perf_counter(), time.thread_time()
        conn.execute(
            "SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 10",
            (match,),
        ).fetchall()
        if number >= WARMUP_CALLS:
            fts.append((time.perf_counter() - started) * 1000)
            fts_cpu.append((time.thread_time() - cpu_started) * 1000)
    conn.close()
    shell = shutil.which("bash") or "sh"
    spawned = []
    for number in range(calls + WARMUP_CALLS):
        started = time.perf_counter()
        subprocess.run([shell, "-c", "echo hi"], capture_output=True, check=True)
        if number >= WARMUP_CALLS:
            spawned.append((time.perf_counter() - started) * 1000)
    return {
        "bare_fts_ms": _spread(fts),
        "bare_fts_cpu_ms": _cpu_spread(fts_cpu),
        "bare_subprocess_ms": _spread(spawned),
    }


# ---- goals and tables ----------------------------------------------------------------------


def _goals(result: dict) -> list[dict]:
    search_floor = result["bare_fts_ms"]["p50"] + result["bare_sdk_ms"]["p50"]
    search_ratio = result["search_ms"]["p50"] / search_floor
    return [
        {
            "goal": f"search per call p50 <= {SEARCH_GOAL_RATIO:g}x bare FTS5 + bare SDK call",
            "value": search_ratio,
            "met": search_ratio <= SEARCH_GOAL_RATIO,
        },
        {
            "goal": f"capy_stats report in process < {STATS_GOAL_MS:g} ms "
            f"({result['store_bytes'] / 1e6:.0f} MB store)",
            "value": result["stats"]["after_ms"],
            "met": result["stats"]["after_ms"] < STATS_GOAL_MS,
        },
        {
            "goal": f"capy_stats per call p50 < {STATS_GOAL_MS:g} ms, through MCP",
            "value": result["stats_ms"]["p50"],
            "met": result["stats_ms"]["p50"] < STATS_GOAL_MS,
        },
    ]


def calls_tables(result: dict) -> list[Table]:
    sdk, fts, spawn = result["bare_sdk_ms"], result["bare_fts_ms"], result["bare_subprocess_ms"]
    table = Table(
        f"through the tool call (official SDK client over stdio, {result['calls']} calls each, "
        f"alternating; store: {result['sources']:,} sources, "
        f"{result['raw_bytes'] / 1e6:.1f} MB of {result['text_from']}, "
        f"file {result['store_bytes'] / 1e6:.1f} MB)",
        ("path", "p50 ms", "p95 ms", "floor p50", "floor p95", "x floor p50"),
    )
    rows = [
        ("capy_search, one query", result["search_ms"], (fts, sdk)),
        ("capy_execute `echo hi`", result["execute_ms"], (spawn, sdk)),
        ("capy_stats", result["stats_ms"], ()),
    ]
    for name, spread, parts in rows:
        floor50 = sum(part["p50"] for part in parts) if parts else None
        floor95 = sum(part["p95"] for part in parts) if parts else None
        table.rows.append(
            (
                name,
                fmt(spread["p50"], 2),
                fmt(spread["p95"], 2),
                fmt(floor50, 2),
                fmt(floor95, 2),
                fmt(spread["p50"] / floor50 if floor50 else None, 2),
            )
        )
    for name, spread in (
        ("floor: bare SDK round trip (no-op tool)", sdk),
        ("floor: bare FTS5 query in process", fts),
        ("floor: bare subprocess `echo hi`", spawn),
    ):
        table.rows.append((name, fmt(spread["p50"], 2), fmt(spread["p95"], 2), "", "", ""))
    stats = result["stats"]
    table.notes.append(
        f"capy_stats in process on the same store: before the counters (full scan) "
        f"{stats['before_ms']:.1f} ms, with them {stats['after_ms']:.2f} ms "
        f"({stats['before_ms'] / max(stats['after_ms'], 1e-6):.0f}x faster; the first report "
        f"after indexing fills the saliences: {stats['first_after_ms']:.1f} ms)"
    )
    cpu = _cpu_table(result)
    return [table, *([cpu] if cpu else []), goals_table("tool-call goals", result["goals"])]


def _cpu_table(result: dict) -> Table | None:
    """The same calls in CPU time, which other load on the machine moves far less than the wall
    time (capy.bench.server_cpu); None where the platform gives no figures."""
    search, sdk, fts = (result.get(f"{name}_cpu_ms") for name in ("search", "bare_sdk", "bare_fts"))
    if not (search and sdk and fts):
        return None
    table = Table(
        "through the tool call, CPU per call (the server process's threads from just before "
        "each request to its reply; the bare FTS5 query's thread in process)",
        ("path", "CPU p50 ms", "CPU mean ms", "floor CPU p50", "x floor CPU p50"),
    )
    floor = fts["p50"] + sdk["p50"]
    ratio = search["p50"] / floor
    table.rows.append(
        (
            "capy_search, one query",
            fmt(search["p50"], 2),
            fmt(search["mean"], 2),
            fmt(floor, 2),
            fmt(ratio, 2),
        )
    )
    for name, spread in (
        ("capy_execute `echo hi`", result.get("execute_cpu_ms")),
        ("capy_stats", result.get("stats_cpu_ms")),
        ("floor: bare SDK server, no-op tool", sdk),
        ("floor: bare FTS5 query in process", fts),
    ):
        if spread:
            table.rows.append((name, fmt(spread["p50"], 2), fmt(spread["mean"], 2), "", ""))
    return table
