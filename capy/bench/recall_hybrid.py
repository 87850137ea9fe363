"""`capy bench recall --hybrid`: LoCoMo and the Claude transcript set recalled lexical-only and
hybrid (with the semantic layer's vector list) side by side, in the same run, each over one
capsule log whose pipeline drain ran the embed stage, beside the bare bm25 floor. The lexical
side passes recall a vector list that finds nothing, so it is exactly recall without the layer;
the hybrid side is recall as an installed layer runs it. Halves as `capy bench recall` (dev
tuned on, held not)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from capy.bench.recall import (
    BUDGET_TOKENS,
    Progress,
    _pick,
    claude_inputs,
    fresh_store,
    load_and_drain,
    locomo_drafts,
    run_locomo,
)
from capy.bench.recall_scoring import Scored, breakdown

METRICS = ("r@5", "r@10", "mrr")
# (store, vectors) -> (capy's scores, the floor's scores), over a drained store
Recaller = Callable[[Any, Any], tuple[list[Scored], list[Scored]]]


def run_locomo_hybrid(
    path: Path,
    *,
    budget: int = BUDGET_TOKENS,
    halves: Sequence[str] = ("dev", "held"),
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Per half and category, R@5, R@10 and MRR of both sides and the floor; {"skipped": why}
    without the layer."""
    from capy.bench.recall_locomo import load_locomo

    turns, questions = load_locomo(path)
    chosen = _pick(questions, halves, limit)
    return _side_by_side(
        path.name,
        locomo_drafts(turns),
        lambda store, vectors: run_locomo(
            store, turns, chosen, budget=budget, progress=progress, vectors=vectors
        ),
    )


def run_claude_hybrid(
    root: Path,
    *,
    budget: int = BUDGET_TOKENS,
    halves: Sequence[str] = ("dev", "held"),
    limit: int | None = None,
) -> dict[str, Any]:
    """The Claude transcript set as `run_locomo_hybrid` measures LoCoMo."""
    from capy.bench.recall_claude import run_claude
    from capy.rules import load_rules

    question_set, keys, drafts = claude_inputs(root, load_rules(), halves, limit)
    return _side_by_side(
        root.name,
        drafts,
        lambda store, vectors: run_claude(
            store, question_set, keys, root, budget=budget, vectors=vectors
        ),
    )


def _side_by_side(source: str, drafts: Sequence[Any], recall_all: Recaller) -> dict[str, Any]:
    """Import and drain `drafts` into a fresh log, then `recall_all(store, vectors)` once per
    side; rows per half and category with lexical, hybrid and floor figures."""
    from capy.bench.hybrid import semantic_ready
    from capy.rules import load_rules
    from capy.semantic.capsules import NoVectors, capsule_vector_search

    rules = load_rules()
    why = semantic_ready(rules)
    searcher = capsule_vector_search() if why is None else None
    if searcher is None:
        return {"skipped": why or "the semantic layer has no model"}
    with tempfile.TemporaryDirectory(prefix="capy-bench-recall-hybrid-") as folder:
        store = fresh_store(Path(folder) / "capsules.db", rules)
        with store:
            load_and_drain(store, drafts)
            lexical, floor = recall_all(store, NoVectors())
            hybrid, _ = recall_all(store, searcher)
    rows = [
        {**sides, "floor": floors["floor"]}
        for sides, floors in zip(
            _renamed(breakdown(lexical, hybrid)), breakdown(lexical, floor), strict=True
        )
    ]
    return {"source": source, "capsules": len(drafts), "rows": rows}


def _renamed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"half": r["half"], "category": r["category"], "lexical": r["capy"], "hybrid": r["floor"]}
        for r in rows
    ]


def hybrid_tables(report: dict[str, Any]) -> list[Any]:
    """One table per set (the report maps a set's name to its figures)."""
    return [_hybrid_table(data) for data in report.values()]


def _hybrid_table(report: dict[str, Any]) -> Any:
    from capy.bench.report import Table, fmt, skipped_table

    if "skipped" in report:
        return skipped_table("recall lexical and hybrid", report["skipped"])
    table = Table(
        f"recall on {report['source']}: lexical-only and hybrid (the vector list) beside the "
        "bm25 floor, by half",
        (
            "half",
            "category",
            "n",
            "R@5 lex",
            "R@5 hyb",
            "R@5 floor",
            "R@10 lex",
            "R@10 hyb",
            "R@10 floor",
            "MRR lex",
            "MRR hyb",
            "MRR floor",
        ),
    )
    for row in report["rows"]:
        lex, hyb, base = row["lexical"], row["hybrid"], row["floor"]
        table.rows.append(
            (
                row["half"],
                row["category"],
                str(lex["questions"]),
                *(fmt(side[metric]) for metric in METRICS for side in (lex, hyb, base)),
            )
        )
    table.notes.append("one capsule log, embedded by the pipeline's embed stage; dev tuned on")
    return table
