"""Capy's search against plain FTS5 bm25 on a TREC collection, both measured in the same run.

The procedure, exactly:
- Topic text is lowercased for both systems (Vaswani's topics are all capitals, its documents
  lowercase; capy would read capitalised words as identifiers).
- capy: every document is indexed as its own durable source (label = DOCNO, content_type
  plaintext) in a throwaway encrypted store, through `index_batch` as `capy index` of a folder
  does (one transaction per batch; the rows are the ones `index_content` writes). nDCG@10
  comes from `search_store` with limit 10, the path an agent takes. MAP@100 comes from the
  same search core with the search pack's `limits.max_results` raised to 100 (nothing else
  changed), since the shipped cap (20) is too shallow for MAP. Hits map to DOCNOs through
  their source label; a source's later chunks are dropped so that each document is ranked once.
- floor: stdlib sqlite3, in memory, `CREATE VIRTUAL TABLE t USING fts5(docno UNINDEXED, body,
  tokenize='porter unicode61')` holding the same document text; the query is the topic's `\\w+`
  terms, each double-quoted (so no term is read as an operator), joined with ` OR `, ranked by
  `bm25(t)` (k1 1.2, b 0.75), top 1000. nDCG@10 and MAP@100 come from that one ranking;
  MAP@1000 is reported too, for comparison with the collection's notes (SOURCES.md).
- Only judged topics (at least one relevant document) are averaged, as trec_eval does.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from capy.bench import metrics
from capy.bench.scratch import scratch_store
from capy.bench.trec_format import TrecCollection, TrecDocument

NDCG_DEPTH = 10
MAP_DEPTH = 100
FLOOR_DEPTH = 1000
GOAL_RATIO = 1.07
_TERM = re.compile(r"\w+")

# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def run_trec(collection: TrecCollection, *, rules: Any = None, progress: Progress | None = None):
    """Both systems over the collection; returns the report dict."""
    from capy.rules import load_rules

    ruleset = rules or load_rules()
    topics = collection.judged_topics
    total = len(collection.documents) + 3 * len(topics)
    step = _Stepper(collection.name, total, progress)
    capy = _run_capy(collection, ruleset, step)
    floor = _run_floor(collection, step)
    return report(collection, capy, floor)


class _Stepper:
    def __init__(self, name: str, total: int, progress: Progress | None) -> None:
        self.name, self.total, self.done, self.progress = name, total, 0, progress

    def __call__(self) -> None:
        self.done += 1
        if self.progress and (self.done % 50 == 0 or self.done == self.total):
            self.progress(f"TREC {self.name}", self.done, self.total)


def _run_capy(collection: TrecCollection, ruleset: Any, step: Callable[[], None]) -> dict:
    pack = ruleset.view("search")
    deeper_limits = pack.limits.model_copy(update={"max_results": MAP_DEPTH})
    deep = pack.model_copy(update={"limits": deeper_limits})
    with indexed_collection(collection, ruleset, step) as (store, index_s):
        started = time.perf_counter()
        shallow = rankings(store, collection, ruleset, pack, NDCG_DEPTH, step)
        deep_runs = rankings(store, collection, ruleset, deep, MAP_DEPTH, step)
        finished = time.perf_counter()
    return {
        "system": "capy",
        "top10": shallow,
        "deep": deep_runs,
        "index_s": index_s,
        "query_s": finished - started,
        "queries": 2 * len(shallow),
    }


@contextmanager
def indexed_collection(
    collection: TrecCollection, ruleset: Any, step: Callable[[], None] = lambda: None
) -> Iterator[tuple[Any, float]]:
    """(store, seconds spent indexing): every document its own durable plaintext source."""
    from capy.store.batch import BatchItem, index_batch

    with scratch_store() as store:
        started = time.perf_counter()
        items = [
            BatchItem(document.docno, document.text, content_type="plaintext")
            for document in collection.documents
            if document.text  # an empty document can match nothing; the floor holds it too
        ]
        index_batch(store, items, rules=ruleset, progress=lambda *_: step())
        for _empty in range(len(collection.documents) - len(items)):
            step()
        yield store, time.perf_counter() - started


def rankings(
    store: Any,
    collection: TrecCollection,
    ruleset: Any,
    pack: Any,
    limit: int,
    step: Callable[[], None] = lambda: None,
) -> dict[str, list[str]]:
    """Topic -> DOCNOs in capy's order, searched with `pack` as the search pack (the path
    `search_store` takes, with the pack given rather than read from the rule set)."""
    from capy.retrieval import search
    from capy.retrieval.model import SearchFilters
    from capy.store.corpus import StoreCorpus

    kinds = tuple(str(kind) for kind in ruleset.view("retention").kinds.default_search)
    corpus = StoreCorpus(store, default_kinds=kinds, bm25=pack.bm25)
    ranked = {}
    for topic in collection.judged_topics:
        # Lowercased for both systems (see the module docstring).
        hits = search(corpus, topic.text.lower(), rules=pack, limit=limit, filters=SearchFilters())
        ranked[topic.id] = docnos(hits.hits)
        step()
    return ranked


def docnos(hits: Sequence[Any]) -> list[str]:
    """Source labels in rank order, each once (a document may come back as several chunks)."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.source_label, None)
    return list(seen)


def floor_query(text: str) -> str:
    return " OR ".join(f'"{term}"' for term in _TERM.findall(text.lower()))


def build_floor(documents: Sequence[TrecDocument]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(docno UNINDEXED, body, tokenize='porter unicode61')"
    )
    with conn:
        conn.executemany(
            "INSERT INTO t (docno, body) VALUES (?, ?)", ((d.docno, d.text) for d in documents)
        )
    return conn


def floor_ranking(conn: sqlite3.Connection, text: str, depth: int = FLOOR_DEPTH) -> list[str]:
    query = floor_query(text)
    if not query:
        return []
    rows = conn.execute(
        "SELECT docno FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (query, depth)
    )
    return [row[0] for row in rows]


def _run_floor(collection: TrecCollection, step: Callable[[], None]) -> dict:
    started = time.perf_counter()
    conn = build_floor(collection.documents)
    indexed = time.perf_counter()
    rankings = {}
    for topic in collection.judged_topics:
        rankings[topic.id] = floor_ranking(conn, topic.text)
        step()
    finished = time.perf_counter()
    conn.close()
    return {
        "system": "fts5 bm25 floor",
        "top10": {topic: ranked[:NDCG_DEPTH] for topic, ranked in rankings.items()},
        "deep": {topic: ranked[:MAP_DEPTH] for topic, ranked in rankings.items()},
        "full": rankings,
        "index_s": indexed - started,
        "query_s": finished - indexed,
        "queries": len(rankings),
    }


def _figures(run: dict, qrels: dict[str, frozenset[str]]) -> dict:
    topics = list(run["top10"])
    figures = {
        "system": run["system"],
        "ndcg@10": metrics.mean(metrics.ndcg_at(run["top10"][t], qrels[t]) for t in topics),
        "map@100": _map(run["deep"], qrels, topics),
        "p@10": metrics.mean(len(set(run["top10"][t]) & qrels[t]) / 10 for t in topics),
        "index_s": round(run["index_s"], 3),
        "query_ms_mean": round(1000 * run["query_s"] / max(run["queries"], 1), 3),
    }
    if "full" in run:
        figures["map@1000"] = _map(run["full"], qrels, topics)
    return figures


def _map(rankings: dict[str, list[str]], qrels: dict[str, frozenset[str]], topics) -> float:
    return metrics.mean(metrics.average_precision(rankings[t], qrels[t]) for t in topics)


def report(collection: TrecCollection, capy: dict, floor: dict) -> dict:
    qrels = collection.qrels
    systems = [_figures(capy, qrels), _figures(floor, qrels)]
    ratio = _ratio(systems[0]["ndcg@10"], systems[1]["ndcg@10"])
    return {
        "benchmark": "trec",
        "collection": collection.name,
        "documents": len(collection.documents),
        "topics": len(collection.topics),
        "judged_topics": len(collection.judged_topics),
        "systems": systems,
        "ratio_ndcg@10": ratio,
        "ratio_map@100": _ratio(systems[0]["map@100"], systems[1]["map@100"]),
        "goals": [
            {
                "goal": f"capy nDCG@10 >= {GOAL_RATIO:g}x the fts5 bm25 floor",
                "value": ratio,
                "met": ratio is not None and ratio >= GOAL_RATIO,
            }
        ],
        "per_topic": [
            {
                "topic": topic,
                "capy_ndcg@10": metrics.ndcg_at(capy["top10"][topic], qrels[topic]),
                "floor_ndcg@10": metrics.ndcg_at(floor["top10"][topic], qrels[topic]),
            }
            for topic in capy["top10"]
        ],
    }


def _ratio(value: float, baseline: float) -> float | None:
    return value / baseline if baseline else None
