"""`capy bench recall`: evidence recall of `capy.capsules.recall` on real conversations and real
agent sessions, beside a bare FTS5 bm25 floor over the same capsule texts in the same run.

- LoCoMo (`capy.bench.recall_locomo`): each turn a capsule, each question recalled within its
  conversation's scope, scored against its labelled evidence turns.
- Claude Code transcripts (`capy.bench.recall_claude`): the sessions imported as the vault
  backfill imports them, each hand-written question recalled within its session's project.

Both import through the capsule log and derive chunks, entities and summaries with the
pipeline's own drain, into a fresh SQLCipher log with a throw-away key. Figures per half (dev,
tuned on; held, not) and per category; the goals are checked on both halves. Evidence folded
into an item as a near-duplicate counts as recalled at that item's rank (`shown_metadata`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.bench.recall_scoring import Scored, breakdown, score

if TYPE_CHECKING:
    from capy.bench.recall_locomo import LocomoQuestion, LocomoTurn
    from capy.capsules import CapsuleStore

GOALS = {"locomo": 0.65, "claude": 0.9}
BUDGET_TOKENS = 1500
DEPTH = 10  # items scored per question (R@10)
Progress = Callable[[str, int, int], None]


def fresh_store(path: Path, rules=None, secret: bytes | None = None) -> CapsuleStore:  # type: ignore[no-untyped-def]
    from capy.bench.capsules_import import _fresh_log
    from capy.rules import load_rules

    return _fresh_log(path, rules or load_rules(), secret)


def load_and_drain(store: CapsuleStore, drafts: Sequence[Any]) -> dict[str, float]:
    """Import `drafts` and run the pipeline until nothing is left; seconds of each. With the
    semantic layer the embed stage's vectors are read from the benchmark cache when seen (the
    same texts embed to the same vectors; embedding them again took most of a run)."""
    from capy.bench.vector_cache import CachedEmbedder
    from capy.capsules.importing import import_drafts
    from capy.capsules.pipeline.versions import RunModels, find_models
    from capy.capsules.pipeline.worker import Worker

    started = time.perf_counter()
    import_drafts(store, [(f"draft {number}", draft) for number, draft in enumerate(drafts)])
    imported = time.perf_counter()
    found = find_models(store)
    embedder = None if found.embedder is None else CachedEmbedder(found.embedder)
    report = Worker(store, models=RunModels(llm=found.llm, embedder=embedder)).drain()
    if report.failed:
        raise AssertionError(f"the pipeline failed jobs: {dict(report.failed)}")
    return {
        "import_seconds": round(imported - started, 2),
        "drain_seconds": round(time.perf_counter() - imported, 2),
    }


def locomo_drafts(turns: Sequence[LocomoTurn]) -> list[Any]:
    from capy.bench.recall_locomo import SCOPE_PREFIX
    from capy.capsules import CapsuleDraft, Scope

    return [
        CapsuleDraft(
            kind="prompt" if turn.first_speaker else "response",
            content=turn.content,
            source="import",
            metadata={
                "session_id": f"{turn.conversation}/{turn.session}",
                "dia_id": turn.dia_id,
                "speaker": turn.speaker,
            },
            created_at=turn.created_at,
            scope=Scope(SCOPE_PREFIX + turn.conversation),
        )
        for turn in turns
    ]


def run_locomo(
    store: CapsuleStore,
    turns: Sequence[LocomoTurn],
    questions: Sequence[LocomoQuestion],
    *,
    budget: int = BUDGET_TOKENS,
    progress: Progress | None = None,
    vectors: Any = None,
) -> tuple[list[Scored], list[Scored]]:
    """Each question recalled by capy and by the floor; their scores, in question order.
    `vectors`: recall's vector list (None: the semantic layer's, when installed)."""
    from capy.bench.recall_floor import Bm25Floor
    from capy.bench.recall_locomo import SCOPE_PREFIX
    from capy.capsules.recall import recall

    floor = Bm25Floor((t.conversation, t.dia_id, t.content) for t in turns)
    metadata = {capsule.id: capsule.metadata for _, capsule in store.backend.scan()}
    mine, base = [], []
    for number, question in enumerate(questions, 1):
        started = time.perf_counter()
        result = recall(
            store,
            question.question,
            budget_tokens=budget,
            project=SCOPE_PREFIX + question.conversation,
            vectors=vectors,
        )
        seconds = time.perf_counter() - started
        ranked = [
            {meta.get("dia_id") for meta in shown_metadata(item, metadata)}
            for item in result.items[:DEPTH]
        ]
        mine.append(
            score(
                question.half,
                question.category,
                question.evidence,
                ranked,
                tokens=result.tokens,
                seconds=seconds,
            )
        )
        started = time.perf_counter()
        keys = floor.search(question.conversation, question.question, DEPTH)
        seconds = time.perf_counter() - started
        base.append(
            score(
                question.half,
                question.category,
                question.evidence,
                [{k} for k in keys],
                seconds=seconds,
            )
        )
        if progress is not None and number % 25 == 0:
            progress("recall locomo", number, len(questions))
    return mine, base


def shown_metadata(item: Any, by_id: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The metadata of the capsules one item shows: its own and those of the near-duplicates
    folded into it (their text is the item's, all but a few words, and the JSON names them), so
    labelled evidence folded into an item counts as recalled there."""
    return [item.metadata, *(by_id[i] for i in item.folded if i in by_id)]


def goal_rows(name: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per half: R@5 against the goal, and whether any category fell below the floor."""
    goals = []
    for half in sorted({row["half"] for row in rows}):
        total = next(r for r in rows if r["half"] == half and r["category"] == "all")
        below = [
            r["category"]
            for r in rows
            if r["half"] == half and r["category"] != "all" and r["capy"]["r@5"] < r["floor"]["r@5"]
        ]
        goals.append(
            {
                "set": name,
                "half": half,
                "r@5": total["capy"]["r@5"],
                "goal": GOALS[name],
                "met": total["capy"]["r@5"] >= GOALS[name] and not below,
                "below_floor": below,
            }
        )
    return goals


def report_rows(mine: Sequence[Scored], base: Sequence[Scored]) -> list[dict[str, Any]]:
    return breakdown(mine, base)


def run(
    locomo: Path | None,
    transcripts: Path | None,
    *,
    budget: int = BUDGET_TOKENS,
    halves: Sequence[str] = ("dev", "held"),
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Both sets (a set whose data is absent is reported as skipped); `limit` keeps the first
    questions of each half only (a quick run, not a figure)."""
    import tempfile

    from capy.rules import load_rules

    rules = load_rules()
    sets: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="capy-bench-recall-") as folder:
        if locomo is not None and locomo.is_file():
            sets["locomo"] = _locomo_set(
                Path(folder), locomo, rules, budget, halves, limit, progress
            )
        if transcripts is not None and transcripts.is_dir():
            sets["claude"] = _claude_set(Path(folder), transcripts, rules, budget, halves, limit)
    goals = [goal for name, data in sets.items() for goal in goal_rows(name, data["rows"])]
    return {"benchmark": "recall", "budget_tokens": budget, "sets": sets, "goals": goals}


def _pick(questions: Sequence[Any], halves: Sequence[str], limit: int | None) -> list[Any]:
    chosen = []
    for half in halves:
        mine = [question for question in questions if question.half == half]
        chosen += mine[:limit] if limit is not None else mine
    return chosen


def _locomo_set(folder, path, rules, budget, halves, limit, progress) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from capy.bench.recall_locomo import load_locomo

    turns, questions = load_locomo(path)
    store = fresh_store(folder / "locomo.db", rules)
    with store:
        timing = load_and_drain(store, locomo_drafts(turns))
        mine, base = run_locomo(
            store, turns, _pick(questions, halves, limit), budget=budget, progress=progress
        )
    return {"source": path.name, "capsules": len(turns), **timing, "rows": report_rows(mine, base)}


def claude_inputs(root: Path, rules, halves: Sequence[str], limit: int | None):  # type: ignore[no-untyped-def]
    """The Claude set's chosen questions, their evidence keys, and the transcripts' drafts."""
    from dataclasses import replace

    from capy.bench.recall_claude import transcript_drafts
    from capy.bench.recall_evidence import resolve_evidence
    from capy.bench.recall_questions import load_questions

    question_set = load_questions()
    keys = resolve_evidence(question_set, root.parent)
    question_set = replace(
        question_set, questions=tuple(_pick(question_set.questions, halves, limit))
    )
    return question_set, keys, transcript_drafts(root, rules)


def _claude_set(folder, root, rules, budget, halves, limit) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from capy.bench.recall_claude import run_claude
    from capy.bench.recall_negatives import load_negatives, run_negatives

    question_set, keys, drafts = claude_inputs(root, rules, halves, limit)
    store = fresh_store(folder / "claude.db", rules)
    with store:
        timing = load_and_drain(store, drafts)
        mine, base = run_claude(store, question_set, keys, root, budget=budget)
        negatives = _pick(load_negatives(), halves, limit)
        unanswerable = run_negatives(store, negatives, root, budget=budget)
    return {
        "source": root.name,
        "capsules": len(drafts),
        **timing,
        "rows": report_rows(mine, base),
        "negatives": unanswerable,
    }


def tables(report: dict[str, Any]) -> list:
    from capy.bench.report import Table, fmt

    out = []
    for data in report["sets"].values():
        table = Table(
            f"recall on {data['source']} ({data['capsules']:,} capsules, briefs within "
            f"{report['budget_tokens']:,} tokens; floor = bare FTS5 bm25 over the same capsules)",
            (
                "half",
                "category",
                "n",
                "R@5",
                "R@10",
                "MRR",
                "floor R@5",
                "floor R@10",
                "floor MRR",
                "tokens",
                "p50 ms",
                "p95 ms",
                "floor p95 ms",
            ),
        )
        for row in data["rows"]:
            mine, base = row["capy"], row["floor"]
            table.rows.append(
                (
                    row["half"],
                    row["category"],
                    str(mine["questions"]),
                    fmt(mine["r@5"]),
                    fmt(mine["r@10"]),
                    fmt(mine["mrr"]),
                    fmt(base["r@5"]),
                    fmt(base["r@10"]),
                    fmt(base["mrr"]),
                    f"{mine['tokens']:.0f}",
                    fmt(mine["p50_ms"], 1),
                    fmt(mine["p95_ms"], 1),
                    fmt(base["p95_ms"], 2),
                )
            )
        table.notes.append(
            f"import {data['import_seconds']} s, pipeline drain {data['drain_seconds']} s; "
            "R@k = share of a question's evidence among the first k items; dev was tuned on, "
            "held was not"
        )
        out.append(table)
        if data.get("negatives"):
            out.append(_negatives_table(data["negatives"]))
    goals = Table("recall goals", ("set", "half", "R@5", "goal", "below floor", "met"))
    for goal in report["goals"]:
        goals.rows.append(
            (
                goal["set"],
                goal["half"],
                fmt(goal["r@5"]),
                fmt(goal["goal"], 2),
                ", ".join(goal["below_floor"]) or "-",
                "yes" if goal["met"] else "no",
            )
        )
    goals.notes.append("a goal is met when R@5 reaches it and no category is below the floor's R@5")
    return [*out, goals] if report["sets"] else out  # no sets with --scale-only


def _negatives_table(rows: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    from capy.bench.report import Table

    table = Table(
        "answer-less questions (nothing happened that answers them)",
        ("half", "n", "returned something"),
    )
    for row in rows:
        table.rows.append((row["half"], str(row["questions"]), str(row["returned"])))
    table.notes.append(
        "each should say nothing matched; fixtures/bench/recall/claude-negatives.yaml"
    )
    return table
