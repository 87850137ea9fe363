"""`capy demo`, the README's first command: a real session that ends in a savings report."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_demo_runs_a_real_session_and_reports_savings(project_dir):
    completed = subprocess.run(
        [sys.executable, "-m", "capy", "demo"],
        cwd=project_dir,
        env={**os.environ, "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    out = completed.stdout
    # The failures of the test run come back, the 1,200 passing lines do not.
    assert "test_invoice_rounding" in out and "assert 2000 == 1999" in out
    assert "test_case_0300 PASSED" not in out
    assert "retry_backoff_ms" in out  # found in the fetched page
    # `capy stats` afterwards shows this project, not the demo: the demo says so.
    assert "throwaway project" in " ".join(out.split()) and "capy stats" in out
    share = float(re.search(r"capy kept ([\d.]+)% of", out).group(1))
    assert share > 80.0
    # It used a throwaway project and key: nothing landed in the user's data or key files.
    home = os.environ["HOME"]
    assert not [path for path in os.walk(home) if "knowledge.db" in path[2] or "db.key" in path[2]]
