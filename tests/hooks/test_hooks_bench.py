"""`capy bench hooks` runs end to end and reports a ratio per payload and the goal."""

from __future__ import annotations

import json
import subprocess
import sys


def test_bench_hooks_reports_ratios(project):
    process = subprocess.run(
        [sys.executable, "-m", "capy", "bench", "hooks", "--runs", "1", "--json"],
        capture_output=True,
        cwd=project,
        timeout=300,
    )
    assert process.returncode == 0, process.stderr.decode()
    report = json.loads(process.stdout)
    names = [row["name"] for row in report["results"]]
    assert names[0] == "PreToolUse Bash heavy (curl)" and "PostToolUse Edit" in names
    assert all(row["ratio"] > 0 for row in report["results"])
    in_process = [row["name"] for row in report["in_process"]]
    assert in_process == names[: len(in_process)]
    assert report["goals"][0]["goal"].startswith("PreToolUse median <= 2.5x")
    # Every payload also ran with capture off in the same rounds.
    assert [row["name"] for row in report["capture"]] == names
    assert {"Stop (1 MB transcript)", "SessionEnd", "PostToolUseFailure"} <= set(names)
    assert all(row["on_ms"] > 0 and row["off_ms"] > 0 for row in report["capture"])
    assert report["goals"][1]["goal"].startswith("capture adds <= 5 ms")
