"""The reply budget follows the intent, on real captured outputs of the niah-real set (dev half).

Errors and failures are listed only for an intent about them; sections far weaker than the best
show nothing, so the strong one keeps its answer line; an intent naming an identifier that the
output never holds gets the short nothing-matched reply. Everything runs for real:
`capy_execute`'s library call on `cat` of the captured file, a real encrypted store, the reply
as the agent reads it.
"""

from __future__ import annotations

import pytest

from tests.niah_real_helpers import ask

ERRORS_HEADING = "### Errors and failures in the output"
NEGATIVE_REPLY_BYTES = 300


def test_a_question_not_about_failures_gets_no_error_list(project_dir):
    # mypy --strict printed 208 errors; the question is about one missing stub.
    text, intent = ask(project_dir, "mypy-strict-tabulate-02", "positive")
    assert ERRORS_HEADING not in text
    assert all(needle in text for needle in intent.needles), text


def test_a_question_about_failures_still_gets_them(project_dir):
    text, _ = ask(project_dir, "mypy-strict-tabulate-01", "positive")
    assert ERRORS_HEADING in text


def test_weak_sections_leave_the_room_to_the_strong_one(project_dir):
    # The run's summary line sat in a strong section that five weaker ones crowded out.
    text, intent = ask(project_dir, "pytest-humanize-ra-02", "positive")
    assert all(needle in text for needle in intent.needles), text


@pytest.mark.parametrize(
    "intent_id",
    ["mypy-strict-tabulate-06", "eslint-qs-06", "pydoc-boltons-iterutils-05"],
)
def test_an_absent_answer_on_a_real_output_gets_the_short_reply(project_dir, intent_id):
    # Errors in the output do not answer a question that is not about them, and a name the
    # output never holds (`console.log`, `zip_longest`) cannot be answered from it.
    text, _ = ask(project_dir, intent_id, "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "Nothing in the output matched" in text


def test_the_short_reply_names_what_the_output_never_holds(project_dir):
    text, _ = ask(project_dir, "eslint-qs-06", "negative")
    assert "It never holds `console.log`." in text


def test_sections_name_their_lines_not_the_label_again(project_dir):
    # Every section of a command's output was titled `<label> (lines a-b)`; the header names
    # the label, so the sections show only where they are.
    text, intent = ask(project_dir, "importtime-httpx-02", "positive")
    label = text.split("` (ephemeral)")[0].rsplit("`", 1)[1]
    headings = [line for line in text.splitlines() if line.startswith("### lines ")]
    assert headings, text
    assert not any(line.startswith(f"### {label}") for line in text.splitlines()), text
    assert all(needle in text for needle in intent.needles), text


# What "is nginx installed" got from a 93 KB `dpkg-query -l` before the reply's room followed
# a middling match down and the output's terms stayed out of a reply with sections: 3.3 KB.
MIDDLING_MATCH_BYTES = 2600


def test_a_middling_match_gets_a_smaller_room(project_dir):
    # "packages", "half-configured" and "held" meet the legend (`halF-conf`, `Hold`) and the
    # package lines; no package is in either state. (The package names asked about in
    # "is nginx installed" now get the nothing-matched reply: test_api_intent_specific.)
    text, intent = ask(project_dir, "dpkg-query-list-08", "negative")
    assert len(text.encode("utf-8")) <= MIDDLING_MATCH_BYTES, text
    assert "Searchable terms" not in text
    assert not any(needle in text.replace(intent.intent, "") for needle in intent.needles)


def test_a_strong_match_on_the_same_output_keeps_its_answer(project_dir):
    text, intent = ask(project_dir, "dpkg-query-list-01", "positive")
    assert all(needle in text for needle in intent.needles), text
