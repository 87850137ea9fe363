"""The hybrid bench says, per set and half, how far hybrid fell below lexical-only."""

from __future__ import annotations

from capy.bench.hybrid import MOST_DROP, drops, hybrid_tables


def needle_half(r1: float, r5: float, ndcg: float) -> dict:
    return {"cases": 10, "r@1": r1, "r@5": r5, "ndcg@10": ndcg, "negative_pass": None}


def trec_half(lexical: float, hybrid: float) -> dict:
    ratios = {"lexical_x": lexical / 0.4, "hybrid_x": hybrid / 0.4}
    return {"topics": 5, "bm25": 0.4, "lexical": lexical, "hybrid": hybrid, **ratios}


REPORT = {
    "needles": {
        "paraphrase": {
            "dev": {"lexical": needle_half(0.2, 0.4, 0.3), "hybrid": needle_half(0.4, 0.8, 0.6)},
            "held": {
                "lexical": needle_half(0.9, 1.0, 0.95),
                "hybrid": needle_half(0.88, 1.0, 0.95),
            },
        }
    },
    "trec": {"vaswani": {"dev": trec_half(0.40, 0.44), "held": trec_half(0.51, 0.508)}},
}


def test_each_set_and_half_reports_its_largest_drop_against_the_floor() -> None:
    rows = {(row["set"], row["half"]): row for row in drops(REPORT)}
    assert rows["paraphrase", "dev"]["drop"] == 0.0 and rows["paraphrase", "dev"]["met"]
    held = rows["paraphrase", "held"]
    assert (held["metric"], round(held["drop"], 3), held["met"]) == ("r@1", 0.02, False)
    trec = rows["TREC vaswani", "held"]
    assert round(trec["drop"], 3) == 0.002 and trec["drop"] <= MOST_DROP and trec["met"]


def test_the_tables_end_with_the_drops() -> None:
    table = hybrid_tables(REPORT)[-1]
    assert "largest drop" in table.title
    assert ("paraphrase", "held", "r@1", "0.020", "no") in table.rows
