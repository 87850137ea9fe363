"""`capy bench recall --hybrid`: LoCoMo recalled lexical-only and hybrid (with the semantic
layer's vector list) side by side, in the same run, over one capsule log whose pipeline drain
ran the embed stage. The lexical side passes recall a vector list that finds nothing, so it is
exactly recall without the layer; the hybrid side is recall as an installed layer runs it.
Halves as `capy bench recall` (dev conversations tuned on, held ones not)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capy.bench.recall import BUDGET_TOKENS, Progress, _pick, fresh_store, locomo_drafts, run_locomo
from capy.bench.recall_scoring import breakdown

SIDES = ("lexical", "hybrid")


def run_locomo_hybrid(
    path: Path,
    *,
    budget: int = BUDGET_TOKENS,
    halves: Sequence[str] = ("dev", "held"),
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Per half and category, R@5, R@10 and MRR of both sides; {"skipped": why} without the
    layer."""
    from capy.bench.hybrid import semantic_ready
    from capy.bench.recall_locomo import load_locomo
    from capy.rules import load_rules
    from capy.semantic.capsules import NoVectors, capsule_vector_search

    rules = load_rules()
    why = semantic_ready(rules)
    searcher = capsule_vector_search() if why is None else None
    if searcher is None:
        return {"skipped": why or "the semantic layer has no model"}
    turns, questions = load_locomo(path)
    chosen = _pick(questions, halves, limit)
    with tempfile.TemporaryDirectory(prefix="capy-bench-recall-hybrid-") as folder:
        store = fresh_store(Path(folder) / "locomo.db", rules)
        with store:
            _import_and_embed(store, locomo_drafts(turns))
            sides = {
                name: run_locomo(store, turns, chosen, budget=budget, vectors=vectors)[0]
                for name, vectors in (("lexical", NoVectors()), ("hybrid", searcher))
            }
    rows = [
        {
            "half": row["half"],
            "category": row["category"],
            "lexical": row["capy"],
            "hybrid": row["floor"],
        }
        for row in breakdown(sides["lexical"], sides["hybrid"])
    ]
    return {"source": path.name, "capsules": len(turns), "rows": rows}


def _import_and_embed(store: Any, drafts: Sequence[Any]) -> None:
    """Import and drain, the embed stage's vectors read from the benchmark cache when seen."""
    from capy.bench.vector_cache import CachedEmbedder
    from capy.capsules.importing import import_drafts
    from capy.capsules.pipeline.versions import RunModels, find_models
    from capy.capsules.pipeline.worker import Worker

    import_drafts(store, [(f"draft {number}", draft) for number, draft in enumerate(drafts)])
    found = find_models(store)
    models = RunModels(llm=found.llm, embedder=CachedEmbedder(found.embedder))
    report = Worker(store, models=models).drain()
    if report.failed:
        raise AssertionError(f"the pipeline failed jobs: {dict(report.failed)}")


def hybrid_table(report: dict[str, Any]) -> Any:
    from capy.bench.report import Table, fmt, skipped_table

    if "skipped" in report:
        return skipped_table("recall lexical and hybrid", report["skipped"])
    table = Table(
        f"recall on {report['source']}: lexical-only and hybrid (the vector list), by half",
        (
            "half",
            "category",
            "n",
            "R@5 lex",
            "R@5 hyb",
            "R@10 lex",
            "R@10 hyb",
            "MRR lex",
            "MRR hyb",
        ),
    )
    for row in report["rows"]:
        lex, hyb = row["lexical"], row["hybrid"]
        table.rows.append(
            (
                row["half"],
                row["category"],
                str(lex["questions"]),
                fmt(lex["r@5"]),
                fmt(hyb["r@5"]),
                fmt(lex["r@10"]),
                fmt(hyb["r@10"]),
                fmt(lex["mrr"]),
                fmt(hyb["mrr"]),
            )
        )
    table.notes.append("one capsule log, embedded by the pipeline's embed stage; dev tuned on")
    return table
