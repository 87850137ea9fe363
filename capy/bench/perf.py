"""Indexing throughput and search latency, each next to a bare baseline measured in the same run.

Indexing: for each content type, the same generated documents are indexed twice into fresh
SQLCipher files (same raw-key encryption, WAL, synchronous NORMAL):
- capy: `index_content` per document (detection skipped by naming the type; secret redaction,
  chunking, hashing, zstd, vocabulary and bookkeeping all included);
- bare: the chunks capy's chunker makes of the same documents (computed before the clock
  starts) inserted straight into the same two FTS5 tables (`chunks` porter, `chunks_trigram`)
  plus the raw document into a plain table, one transaction per document as capy does.
Each is timed `rounds` times on fresh files and the best round kept (least disturbed by the
machine). Ratio = capy seconds / bare seconds; the goal is <= 2.

Search latency: one store grown to each size in turn (built once per run, mixed content types),
the same mixed query set run through `search_store` (limit 10) at each size; the bare line runs
each query's words as an FTS5 AND query over `chunks` ranked by bm25, limit 10, right after.
The set is run in `LATENCY_PASSES` passes and each query's median kept, for capy and bare alike:
on a shared machine one pass measures the machine's hiccups as much as the search (the bare
p95 of single passes moved 24-36 ms on one unchanged 100k store). Each pass starts as cold as
the first: capy's per-process cache of phrase counts is emptied before it, and the SQLite page
cache (2 MiB) holds little of one query's pages by the time it comes round again. The first
pass alone is reported too (`first_pass_p95_ms`, `bare_first_pass_p95_ms`).
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from capy.bench import metrics
from capy.bench.scratch import open_scratch_store, scratch_directory, scratch_store
from capy.bench.textgen import TextGenerator

CONTENT_TYPES = ("markdown", "json", "plaintext", "log", "code")
DEFAULT_SIZES = (1_000, 10_000, 100_000)
LATENCY_LIMIT = 10
LATENCY_PASSES = 3
INDEX_GOAL_RATIO = 2.0
P95_GOAL_MS = 25.0
GOAL_SIZE = 100_000
_WORDS = re.compile(r"\w+")

# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def run_perf(
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    megabytes: float = 2.0,
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
    indexing = [
        measure_indexing(generator, kind, megabytes, document_bytes, rounds, ruleset, progress)
        for kind in CONTENT_TYPES
    ]
    latency = measure_latency(generator, sorted(set(sizes)), queries, ruleset, progress)
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
    from capy.chunking import chunk_text

    count = max(1, round(megabytes * 1_000_000 / document_bytes))
    documents = [generator.document(content_type, document_bytes) for _ in range(count)]
    total_bytes = sum(len(document.encode()) for document in documents)
    chunking = ruleset.view("chunking")
    chunked = [chunk_text(d, content_type=content_type, rules=chunking) for d in documents]
    capy_runs, bare_runs = [], []
    for round_number in range(rounds):
        if progress:
            progress(f"indexing {content_type}", round_number, rounds)
        capy_runs.append(_time_capy(documents, content_type, ruleset))
        bare_runs.append(_time_bare(documents, chunked))
    if progress:
        progress(f"indexing {content_type}", rounds, rounds)
    capy_s, bare_s = min(capy_runs), min(bare_runs)
    return {
        "content_type": content_type,
        "documents": count,
        "bytes": total_bytes,
        "chunks": sum(map(len, chunked)),
        "capy_s": capy_s,
        "bare_s": bare_s,
        "capy_mb_s": total_bytes / 1e6 / capy_s,
        "bare_mb_s": total_bytes / 1e6 / bare_s,
        "ratio": capy_s / bare_s,
    }


def _time_capy(documents: Sequence[str], content_type: str, ruleset: Any) -> float:
    from capy.store.indexing import index_content

    with scratch_directory() as directory, open_scratch_store(directory) as store:
        started = time.perf_counter()
        for number, document in enumerate(documents):
            index_content(
                store,
                document,
                label=f"perf/{content_type}/{number}",
                kind="durable",
                content_type=content_type,
                rules=ruleset,
            )
        return time.perf_counter() - started


def _time_bare(documents: Sequence[str], chunked: Sequence[Sequence[Any]]) -> float:
    from capy.store import chunk_rowid, transaction

    with scratch_directory() as directory, open_scratch_store(directory, "bare.db") as store:
        conn = store.conn
        conn.execute("CREATE TABLE bare_documents (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        started = time.perf_counter()
        for source_id, (document, chunks) in enumerate(zip(documents, chunked, strict=True), 1):
            rows = [
                (chunk_rowid(source_id, ordinal), chunk.title, chunk.content, source_id, ordinal)
                for ordinal, chunk in enumerate(chunks)
            ]
            with transaction(conn):
                conn.execute("INSERT INTO bare_documents VALUES (?, ?)", (source_id, document))
                for table in ("chunks", "chunks_trigram"):
                    conn.executemany(
                        f"INSERT INTO {table} (rowid, title, content, source_id, ordinal) "
                        "VALUES (?, ?, ?, ?, ?)",
                        rows,
                    )
        return time.perf_counter() - started


# ---- search latency ------------------------------------------------------------------------


def measure_latency(
    generator: TextGenerator,
    sizes: Sequence[int],
    query_count: int,
    ruleset: Any,
    progress: Progress | None,
) -> list[dict]:
    from capy.store.corpus import search_store
    from capy.store.indexing import index_content

    results = []
    with scratch_store() as store:
        chunks, documents, build_s = 0, 0, 0.0
        for size in sizes:
            started = time.perf_counter()
            while chunks < size:
                kind = CONTENT_TYPES[documents % len(CONTENT_TYPES)]
                text = generator.document(kind, generator.rng.randint(2_000, 24_000))
                result = index_content(
                    store, text, label=f"perf/{documents}", content_type=kind, rules=ruleset
                )
                chunks += result.chunk_count
                documents += 1
                if progress and documents % 20 == 0:
                    progress(f"building a {size:,}-chunk store", min(chunks, size), size)
            build_s += time.perf_counter() - started
            queries = generator.queries(query_count)
            timed = _time_queries(store, queries, ruleset, search_store, progress, size)
            results.append({"chunks": chunks, "documents": documents, "build_s": build_s, **timed})
    return results


def _time_queries(store, queries, ruleset, search_store, progress, size) -> dict:
    from capy.store.disjunction import forget_phrase_counts

    for _shape, query in queries[:10]:  # warm the page cache and the rules' compiled regexes
        search_store(store, [query], limit=LATENCY_LIMIT, rules=ruleset)
    capy_runs: list[list[float]] = [[] for _ in queries]
    bare_runs: list[list[float]] = [[] for _ in queries]
    empty = 0
    for number in range(LATENCY_PASSES):
        forget_phrase_counts()
        for index, (_shape, query) in enumerate(queries):
            started = time.perf_counter()
            (result,) = search_store(store, [query], limit=LATENCY_LIMIT, rules=ruleset)
            capy_runs[index].append((time.perf_counter() - started) * 1000)
            bare_runs[index].append(_time_bare_query(store.conn, query))
            empty += number == 0 and not result.hits
        if progress:
            progress(f"querying {size:,} chunks", number + 1, LATENCY_PASSES)
    samples = [statistics.median(runs) for runs in capy_runs]
    bare = [statistics.median(runs) for runs in bare_runs]
    by_shape: dict[str, list[float]] = {}
    for (shape, _query), elapsed in zip(queries, samples, strict=True):
        by_shape.setdefault(shape, []).append(elapsed)
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
    }


def _time_bare_query(conn: Any, query: str) -> float:
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
            "goal": f"indexing {row['content_type']} <= {INDEX_GOAL_RATIO:g}x bare FTS5",
            "value": row["ratio"],
            "met": row["ratio"] <= INDEX_GOAL_RATIO,
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
    return goals
