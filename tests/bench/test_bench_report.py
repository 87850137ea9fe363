"""What a person reads: the tables built from benchmark reports, as markdown (snapshots)."""

from __future__ import annotations

from capy.bench import report
from capy.bench.quality import CaseOutcome, summarise


def outcome(case_id: str, content_type: str, rank: int | None, **extra) -> CaseOutcome:
    values = {
        "case_id": case_id,
        "content_type": content_type,
        "query": f"query of {case_id}",
        "negative": False,
        "ceiling": 1,
        "rank": rank,
        "layer": "porter" if rank else None,
        "hits": 3,
        "typo": False,
    }
    return CaseOutcome(**(values | extra))


OUTCOMES = [
    outcome("md-01", "markdown", 1),
    outcome("md-02", "markdown", 2, ceiling=2, layer="rrf"),
    outcome("md-03", "markdown", None, typo=True, top_title="Install › Linux"),
    outcome("md-04", "markdown", None, negative=True, hits=0, ceiling=10),
    outcome("js-01", "json", 1, layer="trigram"),
    outcome("js-02", "json", 3, layer="fuzzy", typo=True),
    outcome("js-03", "json", None, negative=True, hits=2, ceiling=10),
]


def test_quality_summary_figures() -> None:
    summary = summarise(OUTCOMES)
    groups = {row["group"]: row for row in summary["groups"]}
    assert list(groups) == ["markdown", "json", "typos", "overall"]
    overall = groups["overall"]
    assert (overall["positives"], overall["negatives"]) == (5, 2)
    assert overall["r@1"] == 0.4 and overall["r@3"] == 0.8
    assert overall["mrr"] == (1 + 1 / 2 + 0 + 1 + 1 / 3) / 5
    assert overall["within_ceiling"] == 0.6 and overall["negative_pass"] == 0.5
    assert overall["layers"] == {"fuzzy": 1, "porter": 1, "rrf": 1, "trigram": 1}
    assert groups["typos"]["negative_pass"] is None
    assert [f["case_id"] for f in summary["failures"]] == ["md-03", "js-02", "js-03"]
    assert [goal["met"] for goal in summary["goals"]] == [False, False, False, False]


def test_quality_markdown(snapshot) -> None:
    assert report.markdown(report.quality_tables(summarise(OUTCOMES))) == snapshot


def test_trec_markdown(snapshot) -> None:
    trec = {
        "collection": "tiny",
        "documents": 5,
        "judged_topics": 3,
        "systems": [
            {"system": "capy", "ndcg@10": 0.5, "map@100": 0.4, "p@10": 0.2, "index_s": 1.25,
             "query_ms_mean": 3.5},
            {"system": "fts5 bm25 floor", "ndcg@10": 0.4, "map@100": 0.3, "map@1000": 0.31,
             "p@10": 0.1, "index_s": 0.01, "query_ms_mean": 0.5},
        ],
        "ratio_ndcg@10": 1.25,
        "ratio_map@100": 4 / 3,
        "goals": [{"goal": "capy nDCG@10 >= 1.07x the fts5 bm25 floor", "value": 1.25,
                   "met": True}],
    }  # fmt: skip
    assert report.markdown(report.trec_tables(trec)) == snapshot


def test_perf_markdown(snapshot) -> None:
    perf = {
        "settings": {"rounds": 3},
        "indexing": [
            {"content_type": "json", "bytes": 2_000_000, "chunks": 900, "capy_mb_s": 2.0,
             "bare_mb_s": 3.0, "ratio": 1.5, "cpu_ratio": 1.25},
        ],
        "latency": [
            {"chunks": 1000, "queries": 200, "p50_ms": 1.5, "p95_ms": 4.0, "max_ms": 9.0,
             "bare_p50_ms": 0.2, "bare_p95_ms": 0.9, "build_s": 2.0, "passes": 3,
             "first_pass_p95_ms": 5.0, "bare_first_pass_p95_ms": 1.1,
             "p95_ms_by_shape": {"phrase": 3.0, "typo": 4.5},
             "bare_p95_ms_by_shape": {"phrase": 0.8, "typo": 0.2},
             "cpu_p95_ms": 3.5, "bare_cpu_p95_ms": 0.8,
             "through_calls": {"calls": 60, "call_p50_ms": 6.0, "call_p95_ms": 9.0,
                               "call_floor_p50_ms": 4.0, "call_floor_p95_ms": 7.5}},
        ],
        "goals": [{"goal": "search p95 < 25 ms at 100,000 chunks", "value": None, "met": False}],
    }  # fmt: skip
    assert report.markdown(report.perf_tables(perf)) == snapshot


def test_pipes_in_cells_are_escaped() -> None:
    table = report.Table("t", ("a", "b"), [("x|y", "1")])
    assert "| x\\|y | 1 |" in report.markdown([table])


def test_rich_tables_print(capsys) -> None:
    report.print_tables([report.Table("figures", ("name", "value"), [("a", "1.0")], ["a note"])])
    out = capsys.readouterr().out
    assert "figures" in out and "a note" in out


def test_a_piped_report_keeps_every_figure(capsys) -> None:
    # Not a terminal: rich would cut a wide table to 80 columns and print "0.…" for figures.
    wide = report.Table("wide", tuple(f"column {i}" for i in range(14)), [("0.6583",) * 14])
    report.print_tables([wide])
    out = capsys.readouterr().out
    assert out.count("0.6583") == 14 and "…" not in out
