"""Recall: what the capsule log holds about a query, as ranked items and a markdown brief that
never exceeds its token budget.

    from capy.capsules import open_capsules
    from capy.capsules.recall import recall, recall_brief

    with open_capsules() as store:
        result = recall(store, "why did the migration fail", budget_tokens=800)
        for item in result.items:
            print(item.capsule_id, item.kind, item.session_id, item.score)
        print(result.brief)                       # or recall_brief(store, query, ...)

Three ranked lists (`capy.capsules.recall.lists`: the retrieval core over the capsule chunks,
the entity graph one hop out, the semantic layer's vectors when installed) are fused by
weighted Reciprocal Rank Fusion, scaled by recency, cut at the relevance floor and folded where
capsules nearly repeat each other (`capy.capsules.recall.ranking`); the vector list never takes
first place from the capsule the other lists rank first when it holds that capsule too, and
with the pack's `anchors` the first hits of the word lists and of bare bm25 keep a place among
the first five; the brief
(`capy.capsules.recall.brief`) opens with a session summary when the budget is small. Every
constant is the capsules pack's `recall` section. Recall reads the pipeline's derived rows:
capsules the pipeline has not reached yet are not found until it has (`capy capsules distill`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from capy.capsules.model import CapsuleError, Scope, canonical_time, unix_seconds
from capy.capsules.recall.brief import estimate_tokens, render_brief

if TYPE_CHECKING:
    from capy.capsules import Capsule, CapsuleStore
    from capy.capsules.recall.lists import VectorSearch
    from capy.rules.views.capsules import Recall

ScopeChoice = Literal["project", "all"]
# A query that is only a capsule id (or its start) asks for that capsule.
_CAPSULE_ID = re.compile(r"[0-9a-f]{6,64}")


@dataclass(frozen=True)
class RecallItem:
    capsule_id: str
    kind: str
    created_at: str
    session_id: str | None
    project: str
    score: float
    text: str
    lists: tuple[str, ...] = ()  # the ranked lists that found it
    folded: tuple[str, ...] = ()  # ids of near-duplicates it stands for
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "capsule_id": self.capsule_id,
            "kind": self.kind,
            "created_at": self.created_at,
            "session_id": self.session_id,
            "project": self.project,
            "score": round(self.score, 6),
            "lists": list(self.lists),
            "folded": list(self.folded),
            "text": self.text,
        }


@dataclass(frozen=True)
class RecallResult:
    query: str
    items: tuple[RecallItem, ...]  # every relevant capsule, best first (the brief shows the top)
    brief: str
    budget_tokens: int
    tokens: int  # the brief's estimated size

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "items": [item.as_json() for item in self.items],
            "brief": self.brief,
        }


def recall(
    store: CapsuleStore,
    query: str,
    *,
    budget_tokens: int | None = None,
    scope: ScopeChoice = "project",
    project: str | None = None,
    kinds: list[str] | tuple[str, ...] | None = None,
    since: str | datetime | None = None,
    vectors: VectorSearch | None = None,
) -> RecallResult:
    """Recall `query` from `store`: ranked items and their brief within `budget_tokens`.

    `scope="project"` reads the store's project (or `project`), `"all"` every scope; `kinds`
    and `since` (an ISO 8601 time) narrow further. A query that is a capsule id (6 or more hex
    characters) recalls that capsule. Raises `CapsuleError` for an unknown kind or a bad time.
    """
    settings = _settings(store)
    budget = settings.budget(budget_tokens)
    text = " ".join(str(query).split())
    if _CAPSULE_ID.fullmatch(text.lower()):
        found = _by_id(store, text.lower())
        if found is not None:
            return _result(text, [_item(found, 1.0, ("id",), found.content)], budget, settings)
    from capy.capsules.recall.rank import ranked_items

    where = _where(store, scope, project, kinds, since)
    items, summary = ranked_items(store, text, where, settings, vectors=vectors, budget=budget)
    return _result(text, items, budget, settings, summary=summary)


def recall_brief(
    store: CapsuleStore,
    query: str,
    *,
    budget_tokens: int | None = None,
    scope: ScopeChoice = "project",
    project: str | None = None,
    kinds: list[str] | tuple[str, ...] | None = None,
    since: str | datetime | None = None,
) -> str:
    """Only the markdown brief of `recall` (what a proxy or a hook puts before a prompt)."""
    return recall(
        store,
        query,
        budget_tokens=budget_tokens,
        scope=scope,
        project=project,
        kinds=kinds,
        since=since,
    ).brief


def _settings(store: CapsuleStore) -> Recall:
    settings = store.rules.view("capsules").recall
    if settings is None:
        raise CapsuleError("the capsules pack has no `recall` section: restore it from capy's own")
    return settings


def _where(
    store: CapsuleStore,
    scope: ScopeChoice,
    project: str | None,
    kinds: list[str] | tuple[str, ...] | None,
    since: str | datetime | None,
):  # type: ignore[no-untyped-def]
    from capy.capsules.sqlite.recall import RecallScope

    if scope not in ("project", "all"):
        raise CapsuleError(f"scope {scope!r} is not known: use project or all")
    known = store.rules.view("capsules").kinds
    unknown = sorted({kind for kind in kinds or () if kind not in known})
    if unknown:
        raise CapsuleError(
            f"no capsule kind {', '.join(map(repr, unknown))}: use {', '.join(sorted(known))}"
        )
    chosen = None
    if scope == "project":
        chosen = Scope(project) if project else store.default_scope
    since_ts = unix_seconds(canonical_time(since)) if since is not None else None
    return RecallScope(chosen, tuple(sorted(set(kinds))) if kinds else None, since_ts)


def _by_id(store: CapsuleStore, prefix: str) -> Capsule | None:
    try:
        _, capsule = store.find(prefix)
    except CapsuleError:
        return None
    return None if capsule.forgotten else capsule


def _item(capsule: Capsule, score: float, lists: tuple[str, ...], text: str) -> RecallItem:
    session = capsule.metadata.get("session_id")
    return RecallItem(
        capsule_id=capsule.id,
        kind=capsule.kind,
        created_at=capsule.created_at,
        session_id=session if isinstance(session, str) else None,
        project=capsule.scope.project,
        score=score,
        text=text,
        lists=lists,
        metadata=capsule.metadata,
    )


def _result(
    query: str,
    items: list[RecallItem],
    budget: int,
    settings: Recall,
    *,
    summary: tuple[str, str] | None = None,
) -> RecallResult:
    brief = render_brief(query, items, budget, settings, summary=summary)
    return RecallResult(
        query=query,
        items=tuple(items),
        brief=brief,
        budget_tokens=budget,
        tokens=estimate_tokens(brief, settings.chars_per_token),
    )


__all__ = ["RecallItem", "RecallResult", "recall", "recall_brief"]
