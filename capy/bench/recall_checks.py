"""The two checks beside `capy bench recall`'s figures:

- rebuild: one conversation's capsules, briefs for a fixed query set (its first questions),
  every derived table dropped and rebuilt by the pipeline, the briefs again: how many are
  byte-identical.
- scale: LoCoMo turns repeated as further sessions up to N capsules in one scope, drained by
  the pipeline, then recall timed per question (p50, p95), without a reranker.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capy.bench.metrics import percentile

REBUILD_CONVERSATION = "conv-26"
REBUILD_QUERIES = 40
SCALE_QUERIES = 200
SCALE_GOAL_MS = 50.0
EMBED = "embed"


def rebuild_check(locomo: Path | None, *, budget: int) -> dict[str, Any]:
    from capy.bench.recall import fresh_store, load_and_drain, locomo_drafts
    from capy.bench.recall_locomo import SCOPE_PREFIX, load_locomo
    from capy.capsules.pipeline import drain, rebuild
    from capy.capsules.recall import recall_brief
    from capy.rules import load_rules

    if locomo is None:
        return {"skipped": "no LoCoMo file"}
    turns, questions = load_locomo(locomo)
    turns = [turn for turn in turns if turn.conversation == REBUILD_CONVERSATION]
    asked = [q.question for q in questions if q.conversation == REBUILD_CONVERSATION]
    asked = asked[:REBUILD_QUERIES]
    project = SCOPE_PREFIX + REBUILD_CONVERSATION
    with tempfile.TemporaryDirectory(prefix="capy-bench-rebuild-") as folder:
        store = fresh_store(Path(folder) / "rebuild.db", load_rules())
        with store:
            load_and_drain(store, locomo_drafts(turns))
            before = [recall_brief(store, q, budget_tokens=budget, project=project) for q in asked]
            enqueued = rebuild(store)
            drain(store)
            after = [recall_brief(store, q, budget_tokens=budget, project=project) for q in asked]
    same = sum(a == b for a, b in zip(before, after, strict=True))
    return {"queries": len(asked), "identical": same, "jobs_rebuilt": enqueued}


def scale_check(
    capsules: int,
    locomo: Path | None,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    from capy.bench.recall_locomo import load_locomo

    if locomo is None:
        return {"skipped": "no LoCoMo file"}
    _, questions = load_locomo(locomo)
    asked = [q.question for q in questions if q.half == "dev"][:SCALE_QUERIES]
    with tempfile.TemporaryDirectory(prefix="capy-bench-scale-") as folder:
        store, built = scale_store(Path(folder), capsules, locomo)
        with store:
            timed = time_recall(store, asked, progress=progress)
    return {"capsules": capsules, **built, "queries": len(asked), **timed}


def scale_store(folder: Path, capsules: int, locomo: Path, secret: bytes | None = None):  # type: ignore[no-untyped-def]
    """A log of `capsules` LoCoMo turns (repeated as further sessions), drained by the pipeline
    as a user's drain runs it (every stage, in batches); the open store and the seconds of
    each step. The embed stage runs only when recall has a vector list to read its rows
    (without one, its vectors would serve nothing); the scale set repeats the same turns, so
    their vectors come from the benchmarks' vector cache after the first of each."""
    from capy.bench.capsules_import import jsonl_lines, load_turns
    from capy.bench.recall import fresh_store
    from capy.capsules.importing import import_path
    from capy.capsules.pipeline.worker import Worker
    from capy.rules import load_rules

    turns = load_turns(locomo)
    source = folder / "capsules.jsonl"
    lines = (line.replace('"locomo/', '"scale/') for line in jsonl_lines(turns, capsules))
    source.write_text("".join(line + "\n" for line in lines), "utf-8")
    store = fresh_store(folder / "scale.db", load_rules(), secret)
    # A throw-away log: waiting for the disk at each commit measures nothing recall does.
    store.conn.execute("PRAGMA synchronous = OFF")
    models = _scale_models(store)
    live = [stage.name for stage in store.rules.view("capsules").live_stages]
    stages = live if models.embedder is not None else [s for s in live if s != EMBED]
    started = time.perf_counter()
    import_path(store, source)
    imported = time.perf_counter()
    report = Worker(store, models=models).drain(stages)
    drained = time.perf_counter()
    scopes = {scope.project for scope in store.backend.scopes()}
    return store, {
        "scopes": len(scopes),
        "stages": stages,
        "jobs": report.total_done,
        "import_seconds": round(imported - started, 1),
        "drain_seconds": round(drained - imported, 1),
    }


def _scale_models(store):  # type: ignore[no-untyped-def]
    """The run's models, the embedder behind the benchmarks' vector cache; none when recall
    has no vector list to read what it embeds."""
    from capy.bench.vector_cache import CachedEmbedder
    from capy.capsules.pipeline.versions import RunModels, find_models
    from capy.capsules.recall.lists import find_vector_search

    found = find_models(store)
    if found.embedder is None or find_vector_search() is None:
        return RunModels(llm=found.llm)
    return RunModels(llm=found.llm, embedder=CachedEmbedder(found.embedder))


def time_recall(
    store, asked: list[str], *, progress: Callable[[str, int, int], None] | None = None
) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Recall each question over every scope; p50 and p95 in milliseconds."""
    from capy.capsules.recall import recall

    seconds = []
    for number, question in enumerate(asked, 1):
        began = time.perf_counter()
        recall(store, question, scope="all")
        seconds.append((time.perf_counter() - began) * 1000)
        if progress is not None and number % 20 == 0:
            progress("recall at scale", number, len(asked))
    return {
        # The first recall of a process also loads the log's vectors (capy.semantic).
        "first_ms": round(seconds[0], 1) if seconds else None,
        "p50_ms": round(percentile(seconds, 0.5), 1),
        "p95_ms": round(percentile(seconds, 0.95), 1),
        "goal_ms": SCALE_GOAL_MS,
        "met": percentile(seconds, 0.95) < SCALE_GOAL_MS,
    }


def check_tables(report: dict[str, Any]) -> list:
    from capy.bench.report import Table

    out = []
    rebuilt = report.get("rebuild", {})
    table = Table(
        "rebuild: derived tables dropped and rebuilt", ("queries", "identical briefs", "jobs")
    )
    if "skipped" in rebuilt:
        table.notes.append(f"skipped: {rebuilt['skipped']}")
    else:
        table.rows.append(
            (str(rebuilt["queries"]), str(rebuilt["identical"]), str(rebuilt["jobs_rebuilt"]))
        )
    out.append(table)
    scale = report.get("scale")
    if scale and "skipped" not in scale:
        size = Table(
            f"recall at scale ({scale['capsules']:,} capsules, every scope, no reranker)",
            (
                "queries",
                "import s",
                "drain s",
                "first ms",
                "p50 ms",
                "p95 ms",
                "goal p95 ms",
                "met",
            ),
        )
        size.rows.append(
            (
                str(scale["queries"]),
                str(scale["import_seconds"]),
                str(scale["drain_seconds"]),
                str(scale.get("first_ms")),
                str(scale["p50_ms"]),
                str(scale["p95_ms"]),
                str(scale["goal_ms"]),
                "yes" if scale["met"] else "no",
            )
        )
        size.notes.append(
            f"{scale['scopes']} scopes; {scale.get('jobs', 0):,} pipeline jobs drained by one "
            f"drain of every stage ({', '.join(scale['stages'])}); the repeated turns' vectors "
            "come from the benchmarks' vector cache"
        )
        out.append(size)
    return out
