"""The paraphrase set keeps its promise: no content word of a question is in its answer."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "fixtures" / "bench" / "paraphrase" / "tools" / "build.py"
FIXTURE = ROOT / "fixtures" / "bench" / "paraphrase" / "nodejs-docs.jsonl"


def test_no_question_shares_a_word_with_its_answer() -> None:
    completed = subprocess.run(
        [sys.executable, str(TOOL), "--check"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stdout
    assert completed.stdout.strip().endswith("0 problems")


def test_at_least_120_questions_split_into_halves() -> None:
    cases = [case for line in FIXTURE.open() for case in json.loads(line)["cases"]]
    assert len(cases) >= 120
    assert set(Counter(case["split"] for case in cases)) == {"dev", "held"}
