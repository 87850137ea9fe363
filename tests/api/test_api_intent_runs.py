"""Intents about a test or check run: how many, how it ended, why it failed, on real captured
outputs of the niah-real set.

The summary line (`192 passed, 1 skipped in 26.83s`, `Found 208 errors in 1 file`) shares no
word with "final tally" or "how many errors", so it comes from the chunking pack's tally rules,
not from search; a failure intent on a run that says it ran clean gets that line alone.
Everything runs for real: `capy_execute`'s library call on `cat` of the captured file, a real
encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.intent_tally import CLEAN, clean_lines, tally_lines
from capy.api.workspace import Workspace
from capy.rules import load_rules
from tests.niah_real_helpers import ask

NEGATIVE_REPLY_BYTES = 300


@pytest.mark.parametrize(
    "intent_id",
    [
        "pytest-toolz-verbose-03",
        "mypy-strict-tabulate-01",
        # bandit's `Total issues (by severity):` is a heading: its breakdown comes under it.
        "bandit-httpx-03",
        # pyright's JSON report counts under keys: "how many errors" never meets `errorCount`.
        "pyright-six-01",
        # "how long did the analysis take": the duration is a count of the summary too.
        "pyright-six-05",
        # black's `1 file would be reformatted.` closes 25 KB of diff; "black" is nowhere.
        "black-diff-six-01",
        # doctest closes with `131 tests in 78 items.`: "how many examples" meets neither word.
        "doctest-sortedlist-02",
    ],
)
def test_a_question_about_totals_gets_the_summary_line(project_dir, intent_id):
    text, intent = ask(project_dir, intent_id, "positive")
    assert "### How the output sums itself up" in text
    assert all(needle in text for needle in intent.needles), text


def test_a_short_report_asked_for_its_total_is_not_withheld(project_dir):
    # A coverage report's `TOTAL ... 93%` row: "overall coverage" meets neither `TOTAL` nor
    # the `Cover` header, and the 1.9 KB report was withheld as "nothing matched". Its total
    # row answers the question, so the report comes back whole.
    text, intent = ask(project_dir, "coverage-report-wrapt-01", "positive")
    assert "Nothing in the output matched" not in text
    assert intent.needles[0] in text, text


@pytest.mark.parametrize("intent_id", ["pytest-toolz-verbose-04", "pytest-cov-click-06"])
def test_a_failure_question_on_a_clean_run_gets_its_verdict_alone(project_dir, intent_id):
    text, intent = ask(project_dir, intent_id, "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "reports no errors or failures" in text
    assert " passed" in text  # the verdict line itself
    assert not any(needle in text.replace(intent.intent, "") for needle in intent.needles)


def test_a_failing_run_still_lists_its_failures(project_dir):
    # Not clean: 15 setup errors. The failure list stays, the verdict reply does not apply.
    text, _ = ask(project_dir, "pytest-humanize-ra-06", "negative")
    assert "reports no errors or failures" not in text
    assert "### Errors and failures in the output" in text


def test_a_why_question_gets_the_message_pytest_explains_it_with(project_dir):
    # `E       fixture 'benchmark' not found` is the reason of every setup error; it used to
    # fall between the error headings and their file lines, all the list had room for.
    text, intent = ask(project_dir, "pytest-humanize-ra-01", "positive")
    assert all(needle in text for needle in intent.needles), text


def _doctest_run(folder: Path) -> tuple[str, str]:
    """(the command, its output) of a real verbose doctest run over two files: the first
    passes its 150 examples (`150 passed and 0 failed.`, `Test passed.`), the second fails one
    of its two (`Failed example:`, `1 passed and 1 failed.`, `***Test Failed*** 1 failures.`)."""
    checks = "\n".join(f"    >>> add({n}, {n})\n    {2 * n}" for n in range(150))
    (folder / "a.py").write_text(f'def add(a, b):\n    """\n{checks}\n    """\n    return a + b\n')
    (folder / "b.py").write_text(
        'def mul(a, b):\n    """\n    >>> mul(2, 3)\n    6\n    >>> mul(2, 2)\n    5\n    """\n'
        "    return a * b\n"
    )
    argv = [sys.executable, "-m", "doctest", "-v", "a.py", "b.py"]
    run = subprocess.run(argv, cwd=folder, capture_output=True, text=True, check=False)
    return f"cd {shlex.quote(str(folder))} && {shlex.join(argv)}", run.stdout


@pytest.mark.parametrize("intent", ["did any doctest fail", "which examples failed"])
def test_a_doctest_run_with_a_failing_file_is_not_called_clean(project_dir, intent):
    # The first file's `Test passed.` answered "did any doctest fail" as a clean run: doctest's
    # failure lines were flagged by no rule, and one clean summary line was taken for the run's.
    command, _ = _doctest_run(project_dir)
    reply = execute_code(Workspace(project_dir), language="shell", code=command, intent=intent)
    assert "reports no errors" not in reply.text
    assert "Failed example:" in reply.text and "***Test Failed*** 1 failures." in reply.text


def test_a_summary_line_reporting_failures_withholds_the_clean_verdict(tmp_path):
    # Whatever flags the failures, a run whose summary lines report one is not clean because
    # another of its summary lines says so.
    _, output = _doctest_run(tmp_path)
    rules = load_rules()
    assert "1 passed and 1 failed." in output
    assert tally_lines(output, rules, says=CLEAN) == ["150 passed and 0 failed.", "Test passed."]
    assert clean_lines(output, rules) == []
