"""The Claude Code transcripts for `capy bench recall`: every session (with its subagent
sidecars) imported as the vault backfill imports it, and the hand-written questions of
`fixtures/bench/recall/claude-questions.yaml` recalled within their session's project, scored
against their evidence events by the ids the importer keeps (`capy.bench.recall_evidence`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.bench.recall_scoring import Scored, score

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore

DEPTH = 10


def transcript_drafts(root: Path, rules) -> list[Any]:  # type: ignore[no-untyped-def]
    """Drafts of every top-level transcript under `root` (sidecars come with their session)."""
    from capy.capsules.backfill import session_drafts
    from capy.sessions.claude import parse_claude

    pack = rules.view("capsules")
    drafts: list[Any] = []
    for path in sorted(root.rglob("*.jsonl")):
        if "subagents" not in path.parts:
            transcripts = rules.view("transcripts")
            session = parse_claude(path, transcripts)
            drafts += list(session_drafts(session, pack, transcripts))
    return drafts


def store_floor(store: CapsuleStore):  # type: ignore[no-untyped-def]
    """The bm25 floor over the store's own capsules (grouped by project), and each capsule's
    metadata by id."""
    from capy.bench.recall_floor import Bm25Floor

    capsules = [capsule for _, capsule in store.backend.scan()]
    floor = Bm25Floor((c.scope.project, c.id, c.content) for c in capsules)
    return floor, {c.id: c.metadata for c in capsules}


def run_claude(
    store: CapsuleStore,
    question_set: Any,
    keys: dict,
    root: Path,
    *,
    budget: int,
    vectors: Any = None,
) -> tuple[list[Scored], list[Scored]]:
    """Each question recalled by capy and by the floor; their scores, in question order.
    `vectors`: recall's vector list (None: the semantic layer's, when installed)."""
    from capy.bench.recall import shown_metadata
    from capy.capsules.recall import recall
    from capy.sessions.discovery import peek_cwd

    floor, metadata = store_floor(store)
    mine, base = [], []
    for question in question_set.questions:
        wanted = [keys[item] for item in question.evidence]
        project = peek_cwd(root / question.session) or str(store.default_scope.project)
        started = time.perf_counter()
        result = recall(
            store, question.question, budget_tokens=budget, project=project, vectors=vectors
        )
        seconds = time.perf_counter() - started
        mine.append(
            score(
                question.half,
                question.category,
                range(len(wanted)),
                [
                    set().union(*_answered(wanted, shown_metadata(item, metadata)))
                    for item in result.items[:DEPTH]
                ],
                tokens=result.tokens,
                seconds=seconds,
            )
        )
        started = time.perf_counter()
        found = floor.search(project, question.question, DEPTH)
        seconds = time.perf_counter() - started
        ranked = _answered(wanted, [metadata[key] for key in found])
        base.append(
            score(question.half, question.category, range(len(wanted)), ranked, seconds=seconds)
        )
    return mine, base


def _answered(wanted: list, recalled: list[dict]) -> list[set[int]]:
    """Per recalled capsule, which of the question's evidence items it is."""
    return [{i for i, key in enumerate(wanted) if key.matches(meta)} for meta in recalled]
