"""`capy bench capsules-import` runs end to end on a small count (figures are not asserted:
a benchmark is never a timed test)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_bench_reports_both_halves_against_its_floor(shared_testdata) -> None:
    locomo = shared_testdata("locomo", "locomo-dev.json")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "capy",
            "bench",
            "capsules-import",
            "--capsules",
            "120",
            "--locomo",
            str(locomo),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [row["half"] for row in report["halves"]] == ["dev", "held-back"]
    for row in report["halves"]:
        assert row["capy_per_second"] > 0 and row["floor_per_second"] > 0
        assert round(row["parse_share"] + row["prepare_share"] + row["write_share"], 1) == 1.0


def test_a_missing_locomo_file_is_one_line(tmp_path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "capy",
            "bench",
            "capsules-import",
            "--locomo",
            str(tmp_path / "none.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("capy: no LoCoMo file at ")
