"""Intents about a test or check run: how many, how it ended, why it failed, on real captured
outputs of the niah-real set.

The summary line (`192 passed, 1 skipped in 26.83s`, `Found 208 errors in 1 file`) shares no
word with "final tally" or "how many errors", so it comes from the chunking pack's tally rules,
not from search; a failure intent on a run that says it ran clean gets that line alone.
Everything runs for real: `capy_execute`'s library call on `cat` of the captured file, a real
encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import pytest

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
