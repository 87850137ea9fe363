"""`capy bench recall --hybrid`: both sets recalled lexical-only and hybrid over one embedded
capsule log, beside the bm25 floor, per half."""

from __future__ import annotations

import pytest
from test_bench_recall import _locomo  # the tiny LoCoMo-shaped file

from capy.bench.recall_hybrid import hybrid_tables, run_claude_hybrid, run_locomo_hybrid


@pytest.fixture
def semantic_layer():
    from capy.bench.hybrid import semantic_ready
    from capy.rules import load_rules

    why = semantic_ready(load_rules())
    if why is not None:
        pytest.skip(f"hybrid recall needs the semantic layer: {why}")


def _sides_and_floor(report: dict) -> dict:
    total = next(row for row in report["rows"] if row["category"] == "all")
    assert set(total) == {"half", "category", "lexical", "hybrid", "floor"}
    return total


def test_locomo_is_recalled_lexical_and_hybrid_beside_the_floor(tmp_path, semantic_layer):
    report = run_locomo_hybrid(_locomo(tmp_path, "conv-26"), budget=300, halves=("dev",))
    total = _sides_and_floor(report)
    assert total["lexical"]["r@5"] == total["floor"]["r@5"] == 1.0
    (table,) = hybrid_tables({"locomo": report})
    assert {"R@5 lex", "R@5 hyb", "R@5 floor"} <= set(table.columns)


@pytest.mark.slow
def test_the_claude_set_is_recalled_lexical_and_hybrid_beside_the_floor(
    shared_testdata, semantic_layer
):
    root = shared_testdata("claude-transcripts")
    report = run_claude_hybrid(root, halves=("dev", "held"), limit=2)
    assert report["source"] == "claude-transcripts" and report["capsules"] > 100
    halves = {row["half"] for row in report["rows"]}
    assert halves == {"dev", "held"}
    total = _sides_and_floor(report)
    assert total["lexical"]["questions"] == total["hybrid"]["questions"] == 2
    titles = [table.title for table in hybrid_tables({"claude": report})]
    assert titles[0].startswith("recall on claude-transcripts: lexical-only and hybrid")
