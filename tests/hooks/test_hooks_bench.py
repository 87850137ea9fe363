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
    assert [row["name"] for row in report["in_process"]] == names
    assert report["goals"][0]["goal"].startswith("PreToolUse median <= 2.5x")
