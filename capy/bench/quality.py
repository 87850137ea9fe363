"""Search quality on needle fixtures: does the chunk holding the answer come back, and how high.

Every haystack is indexed as its own source into one throwaway encrypted store (so fuzzy
correction sees the whole vocabulary, as in real use); each case's query runs through
`search_store` with limit 10, restricted to its haystack (`source=` its label, `kinds=` its kind).
Metric definitions are in `capy.bench.metrics`; in short, a case's rank is that of the first hit
whose full content holds every needle, that hit is the one relevant item (binary relevance), and
nDCG@10 = 1/log2(1 + rank). A negative case (no needles) passes when nothing comes back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from capy.bench import metrics
from capy.bench.fixtures import Haystack, QualityCase
from capy.bench.scratch import scratch_store

LIMIT = 10
CUTOFFS = (1, 3, 5, 10)
OVERALL = "overall"
TYPO = "typos"
# The goals: (what it says, group, metric, minimum).
GOALS = (
    ("R@1 overall >= 0.92", OVERALL, "r@1", 0.92),
    ("nDCG@10 overall >= 0.96", OVERALL, "ndcg@10", 0.96),
    ("R@1 json >= 0.90", "json", "r@1", 0.90),
    ("every negative case empty", OVERALL, "negative_pass", 1.0),
)

# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CaseOutcome:
    case_id: str
    content_type: str
    query: str
    negative: bool
    ceiling: int
    rank: int | None  # positive cases: first hit holding every needle
    layer: str | None  # the layer that found that hit
    hits: int
    typo: bool
    top_title: str | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        if self.error:
            return False
        if self.negative:
            return self.hits == 0
        return self.rank is not None and self.rank <= self.ceiling


def run_quality(
    haystacks: Sequence[Haystack],
    *,
    rules: Any = None,
    typo_ids: frozenset[str] = frozenset(),
    progress: Progress | None = None,
) -> dict:
    """Index every haystack, run every case, and return the report (see `summarise`)."""
    from capy.rules import load_rules

    ruleset = rules or load_rules()
    total = sum(len(h.cases) for h in haystacks) + len(haystacks)
    done = 0
    outcomes: list[CaseOutcome] = []
    indexed: list[dict] = []
    with scratch_store() as store:
        # Everything is indexed before the first query, so every case sees the same store (its
        # vocabulary and bm25 statistics) whatever the order of the fixture files.
        errors = []
        for haystack in haystacks:
            entry, error = _index(store, haystack, ruleset)
            indexed.append(entry)
            errors.append(error)
            done += 1
            if progress:
                progress("indexing haystacks", done, total)
        for haystack, error in zip(haystacks, errors, strict=True):
            for case in haystack.cases:
                outcomes.append(_run_case(store, haystack, case, ruleset, error, typo_ids))
                done += 1
                if progress:
                    progress("quality cases", done, total)
    return summarise(outcomes, indexed)


def run_cases_under(
    haystacks: Sequence[Haystack], rulesets: dict[str, Any], *, index_rules: Any
) -> dict[str, list[CaseOutcome]]:
    """Every case of `haystacks` under each named rule set, over one store indexed with
    `index_rules` (the rule sets may differ only in packs that do not shape the index)."""
    with scratch_store() as store:
        errors = [_index(store, haystack, index_rules)[1] for haystack in haystacks]
        return {
            name: [
                _run_case(store, haystack, case, ruleset, error, frozenset())
                for haystack, error in zip(haystacks, errors, strict=True)
                for case in haystack.cases
            ]
            for name, ruleset in rulesets.items()
        }


def _index(store: Any, haystack: Haystack, ruleset: Any) -> tuple[dict, str | None]:
    from capy.store.indexing import index_content

    entry = {"id": haystack.id, "content_type": haystack.content_type}
    try:
        result = index_content(
            store,
            haystack.text,
            label=haystack.source_label,
            kind=haystack.source_kind,
            content_type=haystack.index_content_type,
            rules=ruleset,
        )
    except Exception as error:  # recorded against its cases: one bad haystack must not hide all
        entry["error"] = f"{type(error).__name__}: {error}"
        return entry, entry["error"]
    entry.update(indexed_as=result.content_type, chunks=result.chunk_count, bytes=result.bytes)
    return entry, None


def _run_case(
    store: Any,
    haystack: Haystack,
    case: QualityCase,
    ruleset: Any,
    index_error: str | None,
    typo_ids: frozenset[str],
) -> CaseOutcome:
    base = {
        "case_id": case.case_id,
        "content_type": haystack.content_type,
        "query": case.query,
        "negative": case.negative,
        "ceiling": case.ceiling,
        "typo": case.case_id in typo_ids,
    }
    if index_error:
        return CaseOutcome(**base, rank=None, layer=None, hits=0, error=index_error)
    from capy.store.corpus import search_store

    try:
        (result,) = search_store(
            store,
            [case.query],
            limit=LIMIT,
            kinds=[haystack.source_kind],
            source=haystack.source_label,
            rules=ruleset,
        )
    except Exception as error:  # a search that raises is a failure to report, not a crash
        return CaseOutcome(**base, rank=None, layer=None, hits=0, error=f"{error!r}")
    hits = result.hits
    rank = first_rank(hits, case.needles) if not case.negative else None
    layer = hits[rank - 1].layer if rank else None
    top = hits[0].title if hits else None
    return CaseOutcome(**base, rank=rank, layer=layer, hits=len(hits), top_title=top)


def first_rank(hits: Sequence[Any], needles: Sequence[str]) -> int | None:
    """1-based rank of the first hit whose full content contains every needle."""
    for rank, hit in enumerate(hits, start=1):
        if all(needle in hit.content for needle in needles):
            return rank
    return None


def summarise(outcomes: Sequence[CaseOutcome], indexed: Sequence[dict] = ()) -> dict:
    """Per content type (first-seen order), typo queries (when any), and overall; then goals."""
    groups: dict[str, list[CaseOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.content_type, []).append(outcome)
    typo = [outcome for outcome in outcomes if outcome.typo]
    if typo:
        groups[TYPO] = typo
    groups[OVERALL] = list(outcomes)
    rows = [group_figures(name, members) for name, members in groups.items()]
    return {
        "benchmark": "quality",
        "limit": LIMIT,
        "groups": rows,
        "goals": check_goals(rows),
        "failures": [failure(o) for o in outcomes if not o.passed],
        "haystacks": list(indexed),
        "cases": [asdict(outcome) for outcome in outcomes],
    }


def group_figures(name: str, outcomes: Sequence[CaseOutcome]) -> dict:
    positives = [o for o in outcomes if not o.negative]
    negatives = [o for o in outcomes if o.negative]
    ranks = [o.rank for o in positives]
    row: dict[str, Any] = {"group": name, "positives": len(positives), "negatives": len(negatives)}
    for k in CUTOFFS:
        row[f"r@{k}"] = metrics.recall_at(ranks, k) if positives else None
    row["mrr"] = _mean_or_none([metrics.reciprocal_rank(r) for r in ranks])
    row["ndcg@10"] = _mean_or_none([metrics.ndcg_single(r, LIMIT) for r in ranks])
    row["within_ceiling"] = _mean_or_none([float(o.passed) for o in positives])
    row["negative_pass"] = _mean_or_none([float(o.passed) for o in negatives])
    row["layers"] = dict(sorted(Counter(o.layer for o in positives if o.layer).items()))
    return row


def _mean_or_none(values: list[float]) -> float | None:
    """A group without cases of a kind shows a dash, not a misleading 0."""
    return metrics.mean(values) if values else None


def check_goals(rows: Sequence[dict]) -> list[dict]:
    by_name = {row["group"]: row for row in rows}
    goals = []
    for label, group, metric, minimum in GOALS:
        value = by_name.get(group, {}).get(metric)
        goals.append({"goal": label, "value": value, "met": value is not None and value >= minimum})
    return goals


def failure(outcome: CaseOutcome) -> dict:
    if outcome.error:
        why = f"error: {outcome.error}"
    elif outcome.negative:
        why = f"negative, {outcome.hits} hit(s)"
    elif outcome.rank is None:
        why = f"not in top {LIMIT}"
    else:
        why = f"rank {outcome.rank} > ceiling {outcome.ceiling}"
    return {
        "case_id": outcome.case_id,
        "content_type": outcome.content_type,
        "query": outcome.query,
        "why": why,
        "top_title": outcome.top_title,
    }
