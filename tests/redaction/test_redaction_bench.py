"""The redaction benchmark: a seeded 1 MB log, the same findings both ways, figures in a dict.
Timings are printed by `capy bench`, never asserted."""

from __future__ import annotations

from capy.bench.redaction import TARGET_BYTES, run, typical_log


def test_the_log_is_seeded_and_sized():
    first = typical_log()
    assert first == typical_log()
    assert len(first.encode()) == TARGET_BYTES
    assert first != typical_log(seed=8)


def test_the_log_holds_a_few_secrets(secrets):
    found = secrets.find_secrets(typical_log())
    assert 1 <= len(found) <= 50  # some to find, not a wall of them


def test_run_reports_every_figure():
    report = run(runs=1, baseline_runs=1)
    assert report["benchmark"] == "redaction"
    assert report["input_mb"] == 1.0
    names = [row["name"] for row in report["results"]]
    assert names[0] == report["baseline"]
    for row in report["results"]:
        assert row["median_ms"] > 0 and row["mb_per_s"] > 0
        assert row["ms_per_mb"] == round(row["median_ms"] / report["input_mb"], 2)
