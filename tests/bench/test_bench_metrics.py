"""The ranking metrics on examples small enough to work out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capy.bench import metrics

RANKS = [1, 2, None, 4]


@pytest.mark.parametrize(("k", "expected"), [(1, 0.25), (3, 0.5), (5, 0.75), (10, 0.75)])
def test_recall_at_k(k: int, expected: float) -> None:
    assert metrics.recall_at(RANKS, k) == expected


def test_mean_reciprocal_rank() -> None:
    # (1/1 + 1/2 + 0 + 1/4) / 4
    assert metrics.mean(map(metrics.reciprocal_rank, RANKS)) == pytest.approx(0.4375)


def test_ndcg_with_one_relevant_hit() -> None:
    assert metrics.ndcg_single(1) == 1.0
    assert metrics.ndcg_single(2) == pytest.approx(1 / math.log2(3))  # 0.6309
    assert metrics.ndcg_single(4) == pytest.approx(1 / math.log2(5))  # 0.4307
    assert metrics.ndcg_single(None) == 0.0
    assert metrics.ndcg_single(11, k=10) == 0.0
    # mean over RANKS: (1 + 0.63093 + 0 + 0.43068) / 4
    assert metrics.mean(map(metrics.ndcg_single, RANKS)) == pytest.approx(0.515402, abs=1e-6)


def test_trec_ndcg_binary() -> None:
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG (3 relevant) = 1 + 1/log2(3) + 1/2 = 2.130930
    assert metrics.ndcg_at(["a", "x", "b"], {"a", "b", "c"}) == pytest.approx(0.703918, abs=1e-6)
    assert metrics.ndcg_at(["a", "b"], {"a", "b"}) == 1.0
    assert metrics.ndcg_at(["x", "y"], {"a"}) == 0.0
    assert metrics.ndcg_at(["a"], set()) == 0.0
    # Only the top k count, and the ideal is capped at k relevant documents.
    assert metrics.ndcg_at(["x", "a"], {"a"}, k=1) == 0.0
    many = [str(i) for i in range(20)]
    assert metrics.ndcg_at(many, set(many), k=10) == 1.0


def test_average_precision_divides_by_every_relevant_document() -> None:
    # hits at ranks 1 and 3: (1/1 + 2/3) / 3 relevant, one of them never retrieved
    assert metrics.average_precision(["a", "x", "b", "y"], {"a", "b", "c"}) == pytest.approx(5 / 9)
    assert metrics.average_precision(["x", "a"], {"a"}) == 0.5
    assert metrics.average_precision([], {"a"}) == 0.0
    assert metrics.average_precision(["a"], set()) == 0.0


def test_map_is_the_mean_of_average_precisions() -> None:
    runs = {"1": (["a", "b"], {"a"}), "2": (["x", "c"], {"c", "d"})}
    aps = [metrics.average_precision(ranked, relevant) for ranked, relevant in runs.values()]
    assert aps == [1.0, 0.25]
    assert metrics.mean(aps) == 0.625


def test_percentile_is_nearest_rank() -> None:
    samples = [float(i) for i in range(20, 0, -1)]
    assert metrics.percentile(samples, 0.95) == 19.0
    assert metrics.percentile(samples, 0.50) == 10.0
    assert metrics.percentile([5.0], 0.95) == 5.0
    assert metrics.percentile([], 0.95) == 0.0


def test_empty_groups_average_to_zero() -> None:
    assert metrics.mean([]) == 0.0
    assert metrics.recall_at([], 1) == 0.0


@given(st.lists(st.one_of(st.none(), st.integers(1, 30)), max_size=40))
def test_metrics_stay_in_range_and_recall_grows_with_k(ranks) -> None:
    recalls = [metrics.recall_at(ranks, k) for k in (1, 3, 5, 10)]
    assert recalls == sorted(recalls)
    for value in [*recalls, *map(metrics.ndcg_single, ranks), *map(metrics.reciprocal_rank, ranks)]:
        assert 0.0 <= value <= 1.0
