"""`capy bench cli` end to end on a slice of its commands: figures printed, never asserted as
timings (only their shape)."""

from __future__ import annotations

import json

from capy.cli import main


def test_a_slice_reports_a_ratio_and_a_goal_per_command(capsys) -> None:
    code = main(["bench", "cli", "--only", "version", "--only", "which", "--runs", "2", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert [row["name"] for row in report["results"]] == ["--version", "which"]
    assert report["baseline_ms"] > 0 and all(row["ratio"] > 0 for row in report["results"])
    assert [goal["goal"] for goal in report["goals"]] == [
        "capy --version median <= 3x bare Python",
        "capy which median <= 3x bare Python",
    ]
    print(out)  # the figures, for whoever reads the test log


def test_the_table_names_the_baseline(capsys) -> None:
    assert main(["bench", "cli", "--only", "version", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "CLI start-up, median of 1 processes" in out and "-c pass" in out
    assert "capy --version median <= 3x bare Python" in out


def test_an_unknown_command_is_one_clear_error(capsys) -> None:
    assert main(["bench", "cli", "--only", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("capy: --only takes help, rules, search, stats, version, which")
    assert "Traceback" not in err
