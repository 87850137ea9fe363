"""Ranking metrics for the quality and TREC benchmarks, written out so that each is checkable.

Two shapes of judgement occur:
- Needle cases (quality fixtures): one query, one relevant answer. The rank of a case is the
  1-based position of the first hit whose full content holds every needle, or None when no hit
  among the results does. Later hits holding the needles too (overlapping chunks) do not count:
  the agent has its answer at the first one.
- TREC topics: a ranked list of document ids against a set of relevant ids (binary qrels).
Every mean over an empty set is 0.0, so a group with no cases never divides by zero.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """R@k of needle cases: the share of cases found at rank k or better."""
    return mean(1.0 if rank is not None and rank <= k else 0.0 for rank in ranks)


def reciprocal_rank(rank: int | None) -> float:
    """1/rank, 0 when not found (among the results returned, i.e. MRR@limit)."""
    return 1.0 / rank if rank is not None else 0.0


def ndcg_single(rank: int | None, k: int = 10) -> float:
    """nDCG@k with a single relevant item: DCG = 1/log2(1 + rank) within the cut, and the ideal
    ranking puts it first (IDCG = 1/log2(2) = 1), so nDCG is DCG itself."""
    if rank is None or rank > k:
        return 0.0
    return 1.0 / math.log2(1 + rank)


def ndcg_at(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float:
    """Binary nDCG@k as trec_eval computes it: gain 1 per relevant id at rank i, discounted by
    log2(i + 1); normalised by the DCG of min(|relevant|, k) relevant ids at the top."""
    if not relevant:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal


def average_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """AP over the ranking as given (its length is the depth): the mean, over ALL relevant ids,
    of precision at the rank each one was retrieved; relevant ids never retrieved add 0."""
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for i, doc in enumerate(ranked, start=1):
        if doc in relevant:
            found += 1
            total += found / i
    return total / len(relevant)


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 = the value 95% of samples do not exceed)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    index = max(0, math.ceil(fraction * len(ordered)) - 1)
    return ordered[min(index, len(ordered) - 1)]
