"""Search latency with and without the vector list, in the same run, on one store of generated
chunks (the `capy bench perf` latency store): every chunk gets its vectors, then every query is
timed both ways, one right after the other in alternating order, so that a shared machine's
changing load weighs on both sides alike (timed one side after the other, a burst of load on
the other engineers' side turned a run's ratio into 0.57). The lexical-only side is the same
search with the pack's vector list switched off (depth 0: the fusion returns the lexical hits
untouched, as on a store without vectors).

The vectors are random unit vectors (float16, as stored), not the model's: exact search costs
the same whatever the values, and so does the sign prefilter that the search pack uses past its
exact size (a count per row, then a share of the rows scored), and embedding 100,000 chunks
would take hours of CPU. Each chunk gets as many as the pack's piece cutting gives its text (a
long chunk is several pieces). The query is embedded by the real model on every search, as in
use. The gate decides per query whether the vector list runs at all (an AND hit needs none), so
p95 is given over every query and over the queries for which it ran.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from capy.bench import metrics

GOAL_RATIO = 1.3  # hybrid p95 over lexical-only p95, at most
PASSES = 3
LIMIT = 10
Progress = Callable[[str, int, int], None]


def run_hybrid_latency(
    size: int = 100_000, queries: int = 200, seed: int = 1, progress: Progress | None = None
) -> dict[str, Any]:
    from capy.bench.hybrid import semantic_ready
    from capy.bench.perf import grow_store
    from capy.bench.scratch import scratch_store
    from capy.bench.textgen import TextGenerator
    from capy.rules import load_rules

    rules = load_rules()
    why = semantic_ready(rules)
    if why is not None:
        return {"skipped": why}
    generator = TextGenerator(seed)
    with scratch_store() as store:
        chunks, _ = grow_store(store, generator, size, 0, 0, rules, progress)
        asked = [query for _shape, query in generator.queries(queries)]
        vectors = _random_vectors(store, rules, seed)
        lexical, hybrid, opened = _time(store, asked, rules, progress)
    row = {
        "chunks": chunks,
        "vectors": vectors,
        "queries": len(asked),
        "passes": PASSES,
        "lexical_p95_ms": metrics.percentile(lexical, 0.95),
        "hybrid_p95_ms": metrics.percentile(hybrid, 0.95),
        "lexical_p50_ms": metrics.percentile(lexical, 0.50),
        "hybrid_p50_ms": metrics.percentile(hybrid, 0.50),
        "gated_open": len(opened),
        "exact_max_vectors": rules.view("search").vectors.exact_max_vectors,
        "approximate_max_vectors": rules.view("search").vectors.approximate_max_vectors,
        "approximate_rescore_share": rules.view("search").vectors.approximate_rescore_share,
    }
    if opened:
        row["gated_lexical_p95_ms"] = metrics.percentile([lexical[i] for i in opened], 0.95)
        row["gated_hybrid_p95_ms"] = metrics.percentile([hybrid[i] for i in opened], 0.95)
    row["ratio"] = row["hybrid_p95_ms"] / row["lexical_p95_ms"]
    row["met"] = row["ratio"] <= GOAL_RATIO
    return row


def _time(
    store: Any, queries: list[str], rules: Any, progress: Progress | None
) -> tuple[list[float], list[float], list[int]]:
    """Median milliseconds per query over the passes, lexical-only and hybrid, and which
    queries ran the vector list."""
    from capy.bench.hybrid import SearchVariant
    from capy.semantic.query_vectors import forget
    from capy.store.corpus import StoreCorpus, search_store

    ran: set[int] = set()
    original = StoreCorpus.nearest

    def counted(self: Any, *args: Any) -> Any:
        ran.add(current[0])
        return original(self, *args)

    current = [0]
    sides = (SearchVariant(rules, depth=0), rules)  # lexical-only, hybrid
    for query in queries[:10]:  # warm the page cache, the model and the vector matrix
        for side in sides:
            search_store(store, [query], limit=LIMIT, rules=side)
    runs: list[list[list[float]]] = [[[] for _ in queries] for _ in sides]
    StoreCorpus.nearest = counted  # type: ignore[method-assign]
    try:
        for number in range(PASSES):
            for index, query in enumerate(queries):
                current[0] = index
                order = (0, 1) if (index + number) % 2 == 0 else (1, 0)
                for which in order:
                    forget()  # every timed search embeds its query, as a new one does
                    started = time.perf_counter()
                    search_store(store, [query], limit=LIMIT, rules=sides[which])
                    runs[which][index].append((time.perf_counter() - started) * 1000)
            if progress:
                progress("querying (lexical-only and hybrid)", number + 1, PASSES)
    finally:
        StoreCorpus.nearest = original  # type: ignore[method-assign]
    lexical, hybrid = ([statistics.median(samples) for samples in side] for side in runs)
    return lexical, hybrid, sorted(ran)


def _random_vectors(store: Any, rules: Any, seed: int) -> int:
    """Random unit vectors recorded as the current model's: as many per chunk as the pack's
    piece cutting gives that chunk's text (see the module doc), so the matrix searched is as
    large as the model's would be."""
    import numpy as np

    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import _bump, pieces_for
    from capy.store.database import transaction
    from capy.store.migrations import chunk_rowid_range

    model, pieces = pieces_for(rules)
    cutter = shared_embedder(model, rules.view("semantic").embedding.threads)
    conn = store.conn
    rng = np.random.default_rng(seed)
    sources = conn.execute("SELECT id, index_version FROM sources").fetchall()
    written = 0
    with transaction(conn):
        for source_id, version in sources:
            first, last = chunk_rowid_range(source_id)
            rows = [
                (rowid, part)
                for rowid, title, content in conn.execute(
                    "SELECT rowid, title, content FROM chunks WHERE rowid BETWEEN ? AND ?",
                    (first, last),
                )
                for part in range(_piece_count(cutter, pieces, title, content))
            ]
            if not rows:
                continue
            matrix = rng.standard_normal((len(rows), model.dimensions)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            conn.executemany(
                "INSERT INTO chunk_vectors (chunk_id, part, source_id, model, vector) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (rowid, part, source_id, pieces.version, row.astype("<f2").tobytes())
                    for (rowid, part), row in zip(rows, matrix, strict=True)
                ],
            )
            conn.execute(
                "INSERT OR REPLACE INTO source_vectors (source_id, model, index_version, chunks) "
                "VALUES (?, ?, ?, ?)",
                (source_id, pieces.version, version, len(rows)),
            )
            written += len(rows)
        _bump(conn)
    return written


def _piece_count(cutter: Any, pieces: Any, title: str | None, content: str | None) -> int:
    return max(1, len(pieces.cut(cutter, title, content)))


def latency_table(report: dict[str, Any]) -> Any:
    from capy.bench.report import Table, fmt, skipped_table

    if "skipped" in report:
        return skipped_table("search latency with the vector list", report["skipped"])
    table = Table(
        f"search latency at {report['chunks']:,} chunks: lexical-only and with the vector list",
        ("queries", "p50 lex", "p50 hyb", "p95 lex", "p95 hyb", "hyb/lex p95", "goal", "met"),
    )
    table.rows.append(
        (
            str(report["queries"]),
            fmt(report["lexical_p50_ms"], 1),
            fmt(report["hybrid_p50_ms"], 1),
            fmt(report["lexical_p95_ms"], 1),
            fmt(report["hybrid_p95_ms"], 1),
            fmt(report["ratio"], 2),
            f"<= {GOAL_RATIO}",
            "yes" if report["met"] else "no",
        )
    )
    if report["gated_open"]:
        table.notes.append(
            f"the gate ran the vector list for {report['gated_open']} of {report['queries']} "
            f"queries; their p95: lexical {fmt(report['gated_lexical_p95_ms'], 1)} ms, hybrid "
            f"{fmt(report['gated_hybrid_p95_ms'], 1)} ms"
        )
    if report["vectors"] > report.get("approximate_max_vectors", 0) and (
        report["vectors"] > report["exact_max_vectors"]
    ):
        table.notes.append(
            f"{report['vectors']:,} vectors are more than the search pack allows "
            f"({report['exact_max_vectors']:,} exact, {report.get('approximate_max_vectors', 0):,}"
            " approximate): the vector list is left out at this size"
        )
    elif report["vectors"] > report["exact_max_vectors"]:
        table.notes.append(
            f"{report['vectors']:,} vectors are more than the exact-search size "
            f"({report['exact_max_vectors']:,}): the sign prefilter kept "
            f"{report['approximate_rescore_share']:.1%} of them per query, scored on int8 codes"
        )
    table.notes.append(
        f"{report['vectors']:,} random unit vectors, as many per chunk as its pieces (search "
        f"costs the same whatever the values); the query embedded by the real model; each "
        f"query timed both ways in turn, median of {report['passes']} passes"
    )
    return table
