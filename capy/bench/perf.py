"""Indexing throughput and search latency, each next to a bare floor measured in the same run.

Indexing (`capy.bench.perf_floor` says how exactly): capy's `index_batch` against the floor, a
one-transaction insert of the same chunks into a fresh SQLCipher store with the same FTS5
tables, on real files (the shared test data and the standard library, `real_megabytes` of
them) and on generated documents of each content type (detection skipped by naming the
type). capy and the floor alternate `rounds` times on fresh files and the best round of each
is kept (least disturbed by the machine). Ratio = capy MB/s / floor MB/s; the goal is >= 0.7.

Search latency: one store grown to each size in turn (built once per run through
`index_batch`, mixed content types), the same mixed query set run through `search_store`
(limit 10) at each size; the bare line runs each query's words as an FTS5 AND query over
`chunks` ranked by bm25, limit 10, right after, on the same store.
The set is run in `LATENCY_PASSES` passes and each query's median kept, for capy and bare alike:
on a shared machine one pass measures the machine's hiccups as much as the search (the bare
p95 of single passes moved 24-36 ms on one unchanged 100k store). Each pass starts as cold as
the first: capy's per-process cache of phrase counts is emptied before it, and the SQLite page
cache (2 MiB) holds little of one query's pages by the time it comes round again. The first
pass alone is reported too (`first_pass_p95_ms`, `bare_first_pass_p95_ms`). `LARGE_SIZE`
(a million chunks) is measured only when asked (`--large`, run by `just bench`), on a store of
the same documents built by bulk insert and kept for later runs (`capy.bench.perf_large` says
how); its row says whether it was built in this run or reused.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capy.bench import metrics
from capy.bench.scratch import scratch_store
from capy.bench.textgen import TextGenerator

CONTENT_TYPES = ("markdown", "json", "plaintext", "log", "code")
DOCUMENT_BYTES = (2_000, 24_000)  # the size range of a document the latency stores hold
DEFAULT_SIZES = (1_000, 10_000, 100_000)
LARGE_SIZE = 1_000_000
LATENCY_LIMIT = 10
LATENCY_PASSES = 3
INDEX_GOAL_RATIO = 0.7  # capy MB/s over the floor's, at least
P95_GOAL_MS = 25.0
GOAL_SIZE = 100_000
LARGE_P95_GOAL_RATIO = 1.2  # capy p95 over bare FTS5 p95 at LARGE_SIZE, at most
REAL_MEGABYTES = 5.7
REAL_MAX_FILES = 40
# Documents indexed per batch while a latency store grows: enough for batching to pay, few
# enough that a small size is not overshot by much.
BUILD_BATCH_DOCUMENTS = 200
_WORDS = re.compile(r"\w+")

# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def run_perf(
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    megabytes: float = 2.0,
    real_megabytes: float = REAL_MEGABYTES,
    document_bytes: int = 16_000,
    rounds: int = 3,
    queries: int = 200,
    seed: int = 1,
    rules: Any = None,
    progress: Progress | None = None,
    calls: int = 0,
    calls_megabytes: float = 5.0,
) -> dict:
    from capy.rules import load_rules

    ruleset = rules or load_rules()
    generator = TextGenerator(seed)
    real = measure_real_indexing(real_megabytes, REAL_MAX_FILES, rounds, ruleset, progress)
    generated = [
        measure_indexing(generator, kind, megabytes, document_bytes, rounds, ruleset, progress)
        for kind in CONTENT_TYPES
    ]
    indexing = [real, *generated] if real else generated
    grown = sorted(size for size in set(sizes) if size < LARGE_SIZE)
    latency = measure_latency(generator, grown, queries, ruleset, progress)
    latency += [
        measure_large(size, seed, queries, ruleset, progress, calls=calls)
        for size in sorted(set(sizes) - set(grown))
    ]
    through_calls = None
    if calls:  # search, execute and stats through MCP (capy.bench.perf_calls)
        from capy.bench.perf_calls import run_calls

        through_calls = run_calls(
            calls=calls, megabytes=calls_megabytes, seed=seed, progress=progress
        )
    return {
        "benchmark": "perf",
        "indexing": indexing,
        "latency": latency,
        "calls": through_calls,
        "goals": _goals(indexing, latency) + (through_calls or {}).get("goals", []),
        "settings": {
            "megabytes_per_type": megabytes,
            "real_megabytes": real_megabytes,
            "document_bytes": document_bytes,
            "rounds": rounds,
            "queries_per_size": queries,
            "seed": seed,
        },
    }


# ---- indexing ------------------------------------------------------------------------------


def measure_indexing(
    generator: TextGenerator,
    content_type: str,
    megabytes: float,
    document_bytes: int,
    rounds: int,
    ruleset: Any,
    progress: Progress | None,
) -> dict:
    from capy.store.batch import BatchItem

    count = max(1, round(megabytes * 1_000_000 / document_bytes))
    documents = [generator.document(content_type, document_bytes) for _ in range(count)]
    items = [
        BatchItem(f"perf/{content_type}/{number}", document, content_type=content_type)
        for number, document in enumerate(documents)
    ]
    timing = _Timing(rounds, ruleset, progress)
    return _time_both(f"indexing {content_type}", content_type, items, documents, timing)


def measure_real_indexing(
    megabytes: float, max_files: int, rounds: int, ruleset: Any, progress: Progress | None
) -> dict | None:
    """capy against the floor on real files (None when there are none to read)."""
    from capy.bench.perf_floor import real_text
    from capy.store.batch import BatchItem

    cap = ruleset.view("retention").size.max_source_bytes
    corpus = real_text(round(megabytes * 1_000_000), max_files, cap)
    if not corpus.paths:
        return None
    items = [BatchItem(str(path), path.read_bytes) for path in corpus.paths]
    documents = [path.read_text(encoding="utf-8", errors="replace") for path in corpus.paths]
    timing = _Timing(rounds, ruleset, progress)
    row = _time_both("indexing real text", "real text (auto)", items, documents, timing)
    return {**row, "files": len(corpus.paths)}


@dataclass(frozen=True)
class _Timing:
    rounds: int
    ruleset: Any
    progress: Progress | None


def _time_both(
    what: str, name: str, items: Sequence[Any], documents: Sequence[str], timing: _Timing
) -> dict:
    from capy.bench.perf_floor import capy_chunks, time_capy, time_floor

    rounds, ruleset, progress = timing.rounds, timing.ruleset, timing.progress
    chunked = capy_chunks(items, ruleset)
    total_bytes = sum(len(document.encode()) for document in documents)
    capy_runs, bare_runs = [], []
    for round_number in range(rounds):  # alternating, so a slow spell of the machine hits both
        if progress:
            progress(what, round_number, rounds)
        capy_runs.append(time_capy(items, ruleset))
        bare_runs.append(time_floor(documents, chunked))
    if progress:
        progress(what, rounds, rounds)
    capy_s, bare_s = min(run.wall for run in capy_runs), min(run.wall for run in bare_runs)
    capy_cpu, bare_cpu = min(run.cpu for run in capy_runs), min(run.cpu for run in bare_runs)
    return {
        "content_type": name,
        "documents": len(documents),
        "bytes": total_bytes,
        "chunks": sum(map(len, chunked)),
        "capy_s": capy_s,
        "bare_s": bare_s,
        "capy_mb_s": total_bytes / 1e6 / capy_s,
        "bare_mb_s": total_bytes / 1e6 / bare_s,
        "ratio": bare_s / capy_s,  # capy's throughput as a share of the floor's
        "capy_cpu_s": capy_cpu,
        "bare_cpu_s": bare_cpu,
        "cpu_ratio": bare_cpu / capy_cpu,  # the same in CPU time: less moved by other load
    }


# ---- search latency ------------------------------------------------------------------------


def measure_latency(
    generator: TextGenerator,
    sizes: Sequence[int],
    query_count: int,
    ruleset: Any,
    progress: Progress | None,
) -> list[dict]:
    from capy.store.corpus import search_store

    results = []
    with scratch_store() as store:
        chunks, documents, build_s = 0, 0, 0.0
        for size in sizes:
            started = time.perf_counter()
            chunks, documents = grow_store(
                store, generator, size, chunks, documents, ruleset, progress
            )
            build_s += time.perf_counter() - started
            queries = generator.queries(query_count)
            timed = _time_queries(store, queries, ruleset, search_store, progress, size)
            results.append({"chunks": chunks, "documents": documents, "build_s": build_s, **timed})
    return results


def measure_large(
    size: int,
    seed: int,
    query_count: int,
    ruleset: Any,
    progress: Progress | None,
    *,
    calls: int = 0,
) -> dict:
    """Latency on the bulk-built store of `size` chunks (built now, or reused from the cache);
    with `calls`, also that many searches through the tool call (`capy.bench.perf_large_calls`)."""
    from capy.bench.perf_large import large_store
    from capy.store.corpus import search_store

    with large_store(size, seed, ruleset, progress) as built:
        # Queries drawn as the grown sizes draw theirs: from text the documents hold.
        asker = TextGenerator(seed + 1)
        asker.emitted, asker.identifiers = built.emitted, built.identifiers
        queries = asker.queries(query_count)
        timed = _time_queries(built.store, queries, ruleset, search_store, progress, size)
        if calls:
            from capy.bench.perf_calls import WARMUP_CALLS
            from capy.bench.perf_large_calls import search_through_calls

            if progress:
                progress(f"searching {size:,} chunks through the tool call", 0, 1)
            asked = [query for _shape, query in queries][: calls + WARMUP_CALLS]
            store = built.store
            timed["through_calls"] = search_through_calls(
                store.path, store.key.raw.hex(), asked, store.conn
            )
    return {
        "chunks": built.chunks,
        "documents": built.documents,
        "build_s": built.build_s,
        "built": "bulk insert, reused" if built.reused else "bulk insert",
        **timed,
    }


def grow_store(
    store: Any,
    generator: TextGenerator,
    size: int,
    chunks: int,
    documents: int,
    ruleset: Any,
    progress: Progress | None,
) -> tuple[int, int]:
    """Index generated documents of every content type until the store holds `size` chunks;
    (chunks, documents) after."""
    from capy.store.batch import BatchItem, index_batch

    while chunks < size:
        per_document = chunks / documents if documents else 10.0
        wanted = (size - chunks) / max(per_document, 1.0)
        count = max(1, min(BUILD_BATCH_DOCUMENTS, round(wanted)))
        items = []
        for number in range(documents, documents + count):
            kind = CONTENT_TYPES[number % len(CONTENT_TYPES)]
            text = generator.document(kind, generator.rng.randint(*DOCUMENT_BYTES))
            items.append(BatchItem(f"perf/{number}", text, content_type=kind))
        outcomes = index_batch(store, items, rules=ruleset)
        chunks += sum(getattr(outcome, "chunk_count", 0) for outcome in outcomes)
        documents += count
        if progress:
            progress(f"building a {size:,}-chunk store", min(chunks, size), size)
    return chunks, documents


def _time_queries(store, queries, ruleset, search_store, progress, size) -> dict:
    from capy.store.disjunction import forget_phrase_counts

    for _shape, query in queries[:10]:  # warm the page cache and the rules' compiled regexes
        search_store(store, [query], limit=LATENCY_LIMIT, rules=ruleset)
    # Wall and CPU ms of each query, capy's and bare's, one list of passes each.
    capy_runs: list[list[float]] = [[] for _ in queries]
    bare_runs: list[list[float]] = [[] for _ in queries]
    capy_cpu: list[list[float]] = [[] for _ in queries]
    bare_cpu: list[list[float]] = [[] for _ in queries]
    empty = 0
    for number in range(LATENCY_PASSES):
        forget_phrase_counts()
        for index, (_shape, query) in enumerate(queries):
            cpu, started = time.thread_time(), time.perf_counter()
            (result,) = search_store(store, [query], limit=LATENCY_LIMIT, rules=ruleset)
            capy_runs[index].append((time.perf_counter() - started) * 1000)
            capy_cpu[index].append((time.thread_time() - cpu) * 1000)
            cpu = time.thread_time()
            bare_runs[index].append(time_bare_query(store.conn, query))
            bare_cpu[index].append((time.thread_time() - cpu) * 1000)
            empty += number == 0 and not result.hits
        if progress:
            progress(f"querying {size:,} chunks", number + 1, LATENCY_PASSES)
    samples = [statistics.median(runs) for runs in capy_runs]
    bare = [statistics.median(runs) for runs in bare_runs]
    cpu_samples = [statistics.median(runs) for runs in capy_cpu]
    bare_cpu_samples = [statistics.median(runs) for runs in bare_cpu]
    by_shape: dict[str, list[float]] = {}
    bare_by_shape: dict[str, list[float]] = {}
    for (shape, _query), elapsed, floor in zip(queries, samples, bare, strict=True):
        by_shape.setdefault(shape, []).append(elapsed)
        bare_by_shape.setdefault(shape, []).append(floor)
    return {
        "queries": len(queries),
        "passes": LATENCY_PASSES,
        "empty_results": empty,
        "p50_ms": metrics.percentile(samples, 0.50),
        "p95_ms": metrics.percentile(samples, 0.95),
        "max_ms": max(samples),
        "bare_p50_ms": metrics.percentile(bare, 0.50),
        "bare_p95_ms": metrics.percentile(bare, 0.95),
        "first_pass_p95_ms": metrics.percentile([runs[0] for runs in capy_runs], 0.95),
        "bare_first_pass_p95_ms": metrics.percentile([runs[0] for runs in bare_runs], 0.95),
        "p95_ms_by_shape": {s: metrics.percentile(v, 0.95) for s, v in sorted(by_shape.items())},
        "bare_p95_ms_by_shape": {
            s: metrics.percentile(v, 0.95) for s, v in sorted(bare_by_shape.items())
        },
        # CPU time of this thread: what other load on the machine moves least.
        "cpu_p95_ms": metrics.percentile(cpu_samples, 0.95),
        "bare_cpu_p95_ms": metrics.percentile(bare_cpu_samples, 0.95),
    }


def time_bare_query(conn: Any, query: str) -> float:
    match = " ".join(f'"{word}"' for word in _WORDS.findall(query))
    started = time.perf_counter()
    if match:
        conn.execute(
            "SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?",
            (match, LATENCY_LIMIT),
        ).fetchall()
    return (time.perf_counter() - started) * 1000


def _goals(indexing: Sequence[dict], latency: Sequence[dict]) -> list[dict]:
    goals = [
        {
            "goal": f"indexing {row['content_type']} >= {INDEX_GOAL_RATIO:g}x the floor's MB/s",
            "value": row["ratio"],
            "met": row["ratio"] >= INDEX_GOAL_RATIO,
        }
        for row in indexing
    ]
    at_goal = [row for row in latency if row["chunks"] >= GOAL_SIZE]
    p95 = at_goal[0]["p95_ms"] if at_goal else None
    goals.append(
        {
            "goal": f"search p95 < {P95_GOAL_MS:g} ms at {GOAL_SIZE:,} chunks",
            "value": p95,
            "met": p95 is not None and p95 < P95_GOAL_MS,
        }
    )
    large = [row for row in latency if row["chunks"] >= LARGE_SIZE]
    if large:
        row = large[0]
        for measure, mine, floor in (
            ("", row["p95_ms"], row["bare_p95_ms"]),
            (" in CPU time", row["cpu_p95_ms"], row["bare_cpu_p95_ms"]),
        ):
            ratio = mine / floor
            goals.append(
                {
                    "goal": (
                        f"search p95 at {LARGE_SIZE:,} chunks <= {LARGE_P95_GOAL_RATIO:g}x "
                        f"bare FTS5{measure}"
                    ),
                    "value": ratio,
                    "met": ratio <= LARGE_P95_GOAL_RATIO,
                }
            )
    return goals
