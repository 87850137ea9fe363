"""Lexical-only and hybrid (lexical + the gated vector list) side by side, in the same run, on
the same encrypted store: every set is searched once before its chunks have vectors (lexical
only: the store has none, so search is exactly today's) and once after (hybrid).

Every set is split into a dev and a held-back half by the SHA-256 of a stable id (case id,
topic id, question id): even first byte = dev. Gates and weights are tuned on dev halves only;
both halves are reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from capy.bench import metrics

HALVES = ("dev", "held")
# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def half_of(stable_id: str) -> str:
    return "dev" if hashlib.sha256(stable_id.encode()).digest()[0] % 2 == 0 else "held"


class SearchVariant:
    """A rule set whose search pack has other `vectors` settings (for tuning and ablation);
    every other pack is the wrapped set's."""

    def __init__(self, rules: Any, **vectors: Any) -> None:
        self._rules = rules
        pack = rules.view("search")
        weight = vectors.pop("weight", None)
        settings = pack.vectors.model_copy(update=vectors)
        if weight is not None:
            settings = settings.model_copy(
                update={"weight": settings.weight.model_copy(update=weight)}
            )
        self._search = pack.model_copy(update={"vectors": settings})

    def view(self, name: str) -> Any:
        return self._search if name == "search" else self._rules.view(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)


def semantic_ready(rules: Any) -> str | None:
    """Why hybrid cannot run here (None: it can)."""
    from capy.semantic import SemanticError, extra_installed
    from capy.semantic.artifacts import locate

    if not extra_installed():
        return "the semantic extra is not installed (pip install 'capy-mcp[semantic]')"
    model = rules.view("semantic").model()
    if model is None:
        return "the semantic pack names no live model"
    try:
        locate(model)
    except SemanticError as error:
        return error.message
    return None


def embed_store(store: Any, rules: Any, progress: Progress | None = None, label: str = "") -> int:
    """Give every chunk of the store's embedded kinds its vector (cached across runs)."""
    from capy.bench.vector_cache import CachedEmbedder
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import embed_backlog, pieces_for

    pack = rules.view("semantic")
    model, pieces = pieces_for(rules)
    embedder = CachedEmbedder(shared_embedder(model, pack.embedding.threads))

    def report(done: int, total: int, _chunks: int) -> None:
        if progress:
            progress(f"embedding {label}".strip(), done, total)

    return embed_backlog(
        store, embedder, pieces, pack.embedding.kinds, batch_size=64, progress=report
    )


def ranked_figures(ranks: Sequence[int | None], cutoffs: Sequence[int] = (1, 5, 10)) -> dict:
    row: dict[str, Any] = {"cases": len(ranks)}
    for k in cutoffs:
        row[f"r@{k}"] = metrics.recall_at(list(ranks), k) if ranks else None
    row["ndcg@10"] = metrics.mean([metrics.ndcg_single(r, 10) for r in ranks]) if ranks else None
    return row


# --- needle sets (the quality fixtures, the paraphrase set) ---


def needle_outcomes(store: Any, haystacks: Sequence[Any], rules: Any) -> dict[str, Any]:
    """Case id -> CaseOutcome, every case searched once against the store as it is now."""
    from capy.bench.quality import _run_case

    return {
        case.case_id: _run_case(store, haystack, case, rules, None, frozenset())
        for haystack in haystacks
        for case in haystack.cases
    }


def needle_figures(outcomes: Sequence[Any]) -> dict:
    positives = [o for o in outcomes if not o.negative]
    negatives = [o for o in outcomes if o.negative]
    row = ranked_figures([o.rank for o in positives])
    row["negative_pass"] = metrics.mean([float(o.passed) for o in negatives]) if negatives else None
    return row


def index_haystacks(store: Any, haystacks: Sequence[Any], rules: Any) -> None:
    from capy.bench.quality import _index

    for haystack in haystacks:
        _index(store, haystack, rules)


def run_needle_sets(
    sets: dict[str, Sequence[Any]],
    rules: Any,
    variants: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict:
    """Each named set of haystacks in its own scratch store: lexical, then hybrid (with the
    pack's gate, and with each of `variants`, rule sets for tuning), by half."""
    from capy.bench.scratch import scratch_store

    report: dict[str, Any] = {}
    for name, haystacks in sets.items():
        with scratch_store() as store:
            index_haystacks(store, haystacks, rules)
            runs = {"lexical": needle_outcomes(store, haystacks, rules)}
            embed_store(store, rules, progress, name)
            runs["hybrid"] = needle_outcomes(store, haystacks, rules)
            for label, variant in (variants or {}).items():
                runs[label] = needle_outcomes(store, haystacks, variant)
        report[name] = {
            half: {
                system: needle_figures([o for cid, o in outcomes.items() if half_of(cid) == half])
                for system, outcomes in runs.items()
            }
            for half in HALVES
        }
    return report


# --- TREC (nDCG@10 against the bm25 floor) ---


def run_hybrid_trec(collection: Any, rules: Any, progress: Progress | None = None) -> dict:
    """capy lexical-only and hybrid nDCG@10 on the collection's judged topics, by half, with the
    plain FTS5 bm25 floor of `capy.bench.trec` beside them."""
    from capy.bench.scratch import scratch_store
    from capy.bench.trec import NDCG_DEPTH, build_floor, docnos, floor_ranking
    from capy.store.batch import BatchItem, index_batch
    from capy.store.corpus import search_store

    topics = collection.judged_topics

    def run(store: Any) -> dict[str, list[str]]:
        return {
            topic.id: docnos(
                search_store(store, [topic.text.lower()], limit=NDCG_DEPTH, rules=rules)[0].hits
            )
            for topic in topics
        }

    with scratch_store() as store:
        items = [
            BatchItem(d.docno, d.text, content_type="plaintext")
            for d in collection.documents
            if d.text
        ]
        index_batch(store, items, rules=rules)
        lexical = run(store)
        embed_store(store, rules, progress, collection.name)
        hybrid = run(store)
    floor_conn = build_floor(collection.documents)
    floor = {t.id: floor_ranking(floor_conn, t.text, NDCG_DEPTH) for t in topics}
    report: dict[str, Any] = {}
    for half in HALVES:
        chosen = [t for t in topics if half_of(t.id) == half]
        row = {}
        for name, runs in (("bm25", floor), ("lexical", lexical), ("hybrid", hybrid)):
            row[name] = metrics.mean(
                [metrics.ndcg_at(runs[t.id], collection.qrels[t.id], NDCG_DEPTH) for t in chosen]
            )
        row["topics"] = len(chosen)
        row["lexical_x"] = row["lexical"] / row["bm25"] if row["bm25"] else None
        row["hybrid_x"] = row["hybrid"] / row["bm25"] if row["bm25"] else None
        report[half] = row
    return report


def run_hybrid(
    needle_sets: dict[str, Sequence[Any]],
    collection: Any,
    rules: Any,
    progress: Progress | None = None,
) -> dict:
    """Every set, lexical-only and hybrid side by side; {"skipped": why} without the layer."""
    why = semantic_ready(rules)
    if why is not None:
        return {"skipped": why}
    report: dict[str, Any] = {"needles": run_needle_sets(needle_sets, rules, progress=progress)}
    if collection is not None:
        report["trec"] = {collection.name: run_hybrid_trec(collection, rules, progress)}
    report["drops"] = drops(report)
    return report


# The floor: hybrid never below lexical-only by more than this, on any set and half.
MOST_DROP = 0.005
NEEDLE_METRICS = ("r@1", "r@5", "ndcg@10")


def drops(report: dict) -> list[dict]:
    """Per set and half, the largest drop of hybrid below lexical-only over the set's metrics
    (needle sets: R@1, R@5, nDCG@10; TREC: nDCG@10), and whether it is within `MOST_DROP`."""
    rows = []
    for name, halves in report.get("needles", {}).items():
        for half in HALVES:
            lex, hyb = halves[half]["lexical"], halves[half]["hybrid"]
            pairs = [(m, lex[m], hyb[m]) for m in NEEDLE_METRICS if lex[m] is not None]
            rows.append(_worst(name, half, pairs))
    for name, halves in report.get("trec", {}).items():
        for half in HALVES:
            row = halves[half]
            rows.append(_worst(f"TREC {name}", half, [("ndcg@10", row["lexical"], row["hybrid"])]))
    return rows


def _worst(name: str, half: str, pairs: Sequence[tuple[str, float, float]]) -> dict:
    metric, lexical, hybrid = min(pairs, key=lambda pair: pair[2] - pair[1])
    drop = max(0.0, lexical - hybrid)
    return {"set": name, "half": half, "metric": metric, "drop": drop, "met": drop <= MOST_DROP}


def hybrid_tables(report: dict) -> list[Any]:
    from capy.bench.report import Table, fmt, skipped_table

    if "skipped" in report:
        return [skipped_table("lexical and hybrid", report["skipped"])]
    needles = Table(
        "lexical-only and hybrid (the gated vector list) on the needle sets, by half",
        (
            "set",
            "half",
            "cases",
            "R@1 lex",
            "R@1 hyb",
            "R@5 lex",
            "R@5 hyb",
            "nDCG lex",
            "nDCG hyb",
            "neg lex",
            "neg hyb",
        ),
    )
    for name, halves in report["needles"].items():
        for half in HALVES:
            lex, hyb = halves[half]["lexical"], halves[half]["hybrid"]
            needles.rows.append(
                (
                    name,
                    half,
                    str(lex["cases"]),
                    fmt(lex["r@1"]),
                    fmt(hyb["r@1"]),
                    fmt(lex["r@5"]),
                    fmt(hyb["r@5"]),
                    fmt(lex["ndcg@10"]),
                    fmt(hyb["ndcg@10"]),
                    fmt(lex["negative_pass"]),
                    fmt(hyb["negative_pass"]),
                )
            )
    needles.notes.append(
        "halves by the SHA-256 of each case id; the gate was tuned on dev halves only"
    )
    tables = [needles]
    for name, halves in report.get("trec", {}).items():
        trec = Table(
            f"TREC {name}: nDCG@10, bm25 floor, lexical-only and hybrid, by half",
            ("half", "topics", "bm25", "lexical", "hybrid", "lexical/bm25", "hybrid/bm25"),
        )
        for half in HALVES:
            row = halves[half]
            trec.rows.append(
                (
                    half,
                    str(row["topics"]),
                    fmt(row["bm25"]),
                    fmt(row["lexical"]),
                    fmt(row["hybrid"]),
                    fmt(row["lexical_x"]),
                    fmt(row["hybrid_x"]),
                )
            )
        tables.append(trec)
    floor = Table(
        f"hybrid against lexical-only: the largest drop (goal: at most {MOST_DROP})",
        ("set", "half", "metric", "drop", "met"),
    )
    for row in drops(report):
        met = "yes" if row["met"] else "no"
        floor.rows.append((row["set"], row["half"], row["metric"], fmt(row["drop"]), met))
    floor.notes.append("drop: lexical-only minus hybrid on the metric where hybrid fell most")
    tables.append(floor)
    return tables
