"""`capy bench quality` and `capy bench perf` end to end, on tiny inputs written by the tests.

Figures are checked for shape and sense, never for speed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from capy.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_quality_on_two_haystacks(fixture_dir: Path, capsys) -> None:
    code, out, err = run(capsys, "quality", "--fixtures", str(fixture_dir), "--skip-trec", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    quality = report["quality"]
    groups = {row["group"]: row for row in quality["groups"]}
    assert list(groups) == ["markdown", "log", "overall"]
    overall = groups["overall"]
    assert (overall["positives"], overall["negatives"]) == (4, 2)
    assert overall["negative_pass"] == 1.0
    assert quality["failures"] == []  # four plain questions about small documents
    assert overall["r@10"] == 1.0 and overall["within_ceiling"] == 1.0
    assert sum(overall["layers"].values()) == 4
    indexed = {h["id"]: h for h in quality["haystacks"]}
    assert indexed["log-build"]["indexed_as"] == "log"
    assert all(h["chunks"] >= 1 for h in indexed.values())
    assert [case["case_id"] for case in quality["cases"]][:2] == ["md-notes-01", "md-notes-02"]
    assert report["trec"] == {"skipped": "skipped (--skip-trec)"}


def test_quality_never_touches_the_users_store(fixture_dir: Path, capsys) -> None:
    home = Path(os.environ["HOME"])
    assert run(capsys, "quality", "--fixtures", str(fixture_dir), "--skip-trec")[0] == 0
    written = [path.name for path in home.rglob("*") if path.is_file()]
    # The compiled-rules cache may appear, as for any command; a database or key may not.
    assert not [name for name in written if name.endswith((".db", ".key", ".keycheck"))]
    assert not list(Path.cwd().iterdir())


def test_quality_tables_and_markdown(fixture_dir: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "quality.md"
    code, out, err = run(
        capsys, "quality", "--fixtures", str(fixture_dir), "--skip-trec", "--markdown", str(target)
    )
    assert code == 0
    assert "search quality on needle fixtures" in out and "quality goals" in out
    assert err.strip() == f"wrote {target}"
    text = target.read_text(encoding="utf-8")
    assert "| group | cases | R@1 | R@3 | R@5 | R@10 | MRR | nDCG@10 |" in text
    assert "| every negative case empty | 1.000 | met |" in text


def test_quality_with_a_trec_collection(fixture_dir: Path, trec_dir: Path, capsys) -> None:
    code, out, _ = run(
        capsys, "quality", "--fixtures", str(fixture_dir), "--trec", str(trec_dir), "--json"
    )
    assert code == 0
    trec = json.loads(out)["trec"]
    assert (trec["documents"], trec["topics"], trec["judged_topics"]) == (5, 3, 3)
    capy, floor = trec["systems"]
    assert (capy["system"], floor["system"]) == ("capy", "fts5 bm25 floor")
    for system in (capy, floor):
        assert 0.0 < system["ndcg@10"] <= 1.0 and 0.0 < system["map@100"] <= 1.0
    assert trec["ratio_ndcg@10"] == pytest.approx(capy["ndcg@10"] / floor["ndcg@10"])
    by_topic = {row["topic"]: row for row in trec["per_topic"]}
    assert by_topic["1"]["floor_ndcg@10"] == 1.0  # d1 is the only relevant one, ranked first


def test_missing_default_collection_is_a_note(fixture_dir: Path, tmp_path, capsys, monkeypatch):
    import capy.cli.bench as bench_cli

    monkeypatch.setattr(bench_cli, "DEFAULT_TREC", tmp_path / "no-such-collection")
    code, out, _ = run(capsys, "quality", "--fixtures", str(fixture_dir), "--json")
    assert code == 0
    assert json.loads(out)["trec"]["skipped"] == (
        f"no TREC collection at {tmp_path / 'no-such-collection'}; pass --trec DIR to run one"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["quality", "--fixtures", "nowhere"], "capy: no fixture directory at nowhere"),
        (["quality", "--trec", "nowhere"], "capy: nowhere is not a TREC collection: missing"),
        (["perf", "--sizes", "10,ten"], "capy: --sizes takes positive chunk counts"),
        (["perf", "--rounds", "0"], "capy: --sizes takes positive chunk counts"),
        (["perf", "--calls", "-1"], "capy: --calls takes 0 (skip) or more"),
    ],
)
def test_bad_arguments_are_one_line(fixture_dir: Path, capsys, argv, message) -> None:
    if "--trec" in argv:
        argv = [*argv, "--fixtures", str(fixture_dir)]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_check_fails_when_a_goal_is_missed(fixture_dir: Path, capsys) -> None:
    entry = json.loads((fixture_dir / "a.jsonl").read_text(encoding="utf-8"))
    entry["cases"][0]["query"] = "kubernetes ingress annotations"  # matches nothing there
    (fixture_dir / "a.jsonl").write_text(json.dumps(entry), encoding="utf-8")
    args = ["quality", "--fixtures", str(fixture_dir), "--skip-trec", "--json"]
    code, out, _ = run(capsys, *args)
    assert code == 0
    failures = json.loads(out)["quality"]["failures"]
    assert [(f["case_id"], f["why"]) for f in failures] == [("md-notes-01", "not in top 10")]
    assert run(capsys, *args, "--check")[0] == 1


def test_perf_tiny_run(capsys) -> None:
    code, out, err = run(
        capsys,
        "perf",
        *("--sizes", "40,80", "--megabytes", "0.02", "--rounds", "1", "--queries", "10"),
        *("--calls", "0", "--real-megabytes", "0.01", "--json"),
    )
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["calls"] is None
    kinds = [row["content_type"] for row in report["indexing"]]
    assert kinds[1:] == ["markdown", "json", "plaintext", "log", "code"]
    assert kinds[0] == "real text (auto)" and report["indexing"][0]["files"] >= 1
    for row in report["indexing"]:
        assert row["chunks"] >= 1 and row["capy_s"] > 0 and row["bare_s"] > 0
        # capy's throughput as a share of the one-transaction floor's
        assert row["ratio"] == pytest.approx(row["bare_s"] / row["capy_s"])
    sizes = [row["chunks"] for row in report["latency"]]
    assert sizes[0] >= 40 and sizes[1] >= 80
    assert all(row["queries"] == 10 and row["p95_ms"] >= row["p50_ms"] for row in report["latency"])
    # Each query's median of three passes, the first pass reported beside it.
    assert all(row["passes"] == 3 and row["first_pass_p95_ms"] > 0 for row in report["latency"])
    assert report["goals"][-1]["value"] is None  # no 100k store in a tiny run: not measured


def test_perf_through_the_tool_call(capsys) -> None:
    """Search, execute and stats through a real stdio session, beside their floors."""
    code, out, err = run(
        capsys,
        "perf",
        *("--sizes", "40", "--megabytes", "0.02", "--rounds", "1", "--queries", "5"),
        *("--calls", "4", "--calls-megabytes", "0.3", "--json"),
    )
    assert (code, err) == (0, "")
    calls = json.loads(out)["calls"]
    assert calls["sources"] >= 1 and calls["store_bytes"] > 0
    for name in ("search_ms", "execute_ms", "stats_ms", "bare_sdk_ms", "bare_fts_ms"):
        assert 0 < calls[name]["p50"] <= calls[name]["p95"], name
    assert calls["stats"]["before_ms"] > 0 and calls["stats"]["after_ms"] > 0
    if sys.platform.startswith("linux"):  # CPU per call, read from the servers' /proc entries
        for name in ("search", "execute", "stats", "bare_sdk", "bare_fts"):
            spread = calls[f"{name}_cpu_ms"]
            assert 0 < spread["p50"] <= spread["p95"] and spread["mean"] > 0, name
    goals = [goal["goal"] for goal in calls["goals"]]
    assert goals[0].startswith("search per call p50 <= 2x") and "capy_stats" in goals[2]
