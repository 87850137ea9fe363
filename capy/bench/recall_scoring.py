"""Scoring recall: per question the share of its evidence among the first k items (R@k), the
reciprocal rank of the first evidence item (MRR), the brief's tokens and the call's latency;
then means per half and per category, for capy and for the bm25 floor side by side."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capy.bench.metrics import mean, percentile

KS = (5, 10)


@dataclass(frozen=True)
class Scored:
    """One question's outcome for one system."""

    half: str
    category: str
    found: tuple[bool, ...]  # per rank: does the item at that rank hold evidence
    hits_at: dict[int, float]  # k -> share of the evidence among the first k
    tokens: int = 0
    seconds: float = 0.0

    @property
    def reciprocal_rank(self) -> float:
        first = next((rank for rank, hit in enumerate(self.found, 1) if hit), None)
        return 0.0 if first is None else 1.0 / first


def score(
    half: str,
    category: str,
    evidence: Sequence[Any],
    ranked: Sequence[set[Any]],
    *,
    tokens: int = 0,
    seconds: float = 0.0,
) -> Scored:
    """`evidence`: the question's evidence keys; `ranked`: per recalled item, the evidence keys
    it holds (an item may answer several)."""
    wanted = set(evidence)
    hits_at = {}
    for k in KS:
        got = set().union(*ranked[:k]) & wanted if ranked[:k] else set()
        hits_at[k] = len(got) / len(wanted) if wanted else 0.0
    return Scored(
        half,
        category,
        tuple(bool(keys & wanted) for keys in ranked),
        hits_at,
        tokens,
        seconds,
    )


def summarise(rows: Sequence[Scored]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    latencies = [row.seconds * 1000 for row in rows]
    return {
        "questions": len(rows),
        **{f"r@{k}": round(mean(row.hits_at[k] for row in rows), 4) for k in KS},
        "mrr": round(mean(row.reciprocal_rank for row in rows), 4),
        "tokens": round(mean(row.tokens for row in rows), 1),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
    }


def breakdown(capy: Sequence[Scored], floor: Sequence[Scored]) -> list[dict[str, Any]]:
    """Per half, then per half and category: capy's figures beside the floor's."""
    groups: dict[tuple[str, str], tuple[list[Scored], list[Scored]]] = defaultdict(lambda: ([], []))
    for mine, base in zip(capy, floor, strict=True):
        for key in ((mine.half, "all"), (mine.half, mine.category)):
            groups[key][0].append(mine)
            groups[key][1].append(base)
    rows = []
    for (half, category), (mine, base) in sorted(groups.items(), key=_order):
        rows.append(
            {"half": half, "category": category, "capy": summarise(mine), "floor": summarise(base)}
        )
    return rows


def _order(item: tuple[tuple[str, str], Any]) -> tuple[str, int, str]:
    half, category = item[0]
    return (half, category != "all", category)
