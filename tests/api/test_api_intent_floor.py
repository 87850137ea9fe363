"""The relevance floor of intent replies, on real captured outputs of the niah-real set.

A question whose answer is not in the output gets a short reply that says so and lists the
output's distinctive terms; one whose answer is there (even only weakly worded like the
output) still gets its answer. Everything runs for real: `capy_execute`'s library call on
`cat` of the captured file, a real encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from capy.bench.niah_real_set import load_real_set

SET = Path(__file__).parents[2] / "fixtures" / "niah-real"
NEGATIVE_REPLY_BYTES = 300


def _intent(intent_id: str):
    for output in load_real_set(SET).outputs:
        for intent in output.intents:
            if intent.intent_id == intent_id:
                return output, intent
    raise AssertionError(f"no intent {intent_id} in the set")


def _ask(project_dir: Path, intent_id: str, kind: str):
    output, intent = _intent(intent_id)
    assert intent.kind == kind, f"{intent_id} is not a {kind} intent"
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    return reply.text, intent


@pytest.mark.parametrize(
    "intent_id",
    [
        "tar-list-click-04",
        # Porter folds "parsing" and `parse.js` (and `parseOptions`) to one stem, so the
        # intent's rarest word looked present. The kind of failure asked about must be held
        # by a flagged line (or be a whole word of the output): none of the 66 lint errors is
        # about parsing, so the error list does not answer it and the stem does not count.
        "eslint-semver-all-06",
        # "syntax errors" on a ruff run whose findings are none: the errors list answered it.
        "ruff-httpx-05",
        "http-server-access-04",
    ],
)
def test_an_answer_that_is_not_there_gets_a_short_nothing_matched(project_dir, intent_id):
    text, intent = _ask(project_dir, intent_id, "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "Nothing in the output matched" in text
    assert "Terms: `" in text  # the distinctive terms, for a better-worded follow-up
    # The question is echoed, the names of it the output never holds and the kinds of failure
    # none of its errors is about; nothing beyond it.
    shown = re.sub(r" (It never holds|None of the errors it reports is about) [^.]*\.", "", text)
    shown = shown.replace(intent.intent, "")
    assert not any(needle in shown for needle in intent.needles)


@pytest.mark.parametrize(
    "intent_id",
    ["pip-install-build-fail-02", "ruff-boltons-concise-03", "tsc-build-verbose-react-02"],
)
def test_an_answer_that_is_there_but_loosely_worded_still_comes_back(project_dir, intent_id):
    text, intent = _ask(project_dir, intent_id, "positive")
    assert "Nothing in the output matched" not in text
    assert all(needle in text for needle in intent.needles), text


def test_words_that_only_frame_the_question_do_not_sink_it(project_dir):
    # "how *long* did importing httpx *take* in *total*": `python -X importtime` prints none of
    # the framing words, and as absent words they outweighed `httpx` and `import`, so the
    # reply said nothing matched. Framing words the output never holds now weigh nothing.
    text, intent = _ask(project_dir, "importtime-httpx-02", "positive")
    assert "Nothing in the output matched" not in text
    assert all(needle in text for needle in intent.needles), text


def test_an_output_that_reports_failures_still_lists_them_below_the_floor(project_dir):
    # A failing run answers any question with its failures, the reason it was run.
    text, _ = _ask(project_dir, "pytest-humanize-ra-06", "negative")
    assert "Nothing in the output matched" not in text
    assert "### Errors and failures in the output" in text


@pytest.mark.parametrize(
    "intent_id", ["pylint-more-itertools-recipes-05", "node-test-spec-fastify-plugin-04"]
)
def test_a_short_output_without_the_answer_is_not_handed_back_whole(project_dir, intent_id):
    # Under the intent threshold the output used to come back whole whatever was asked: 2-3 KB
    # for a question it cannot answer. The same judgement as for long output says so briefly.
    text, intent = _ask(project_dir, intent_id, "negative")
    output, _ = _intent(intent_id)
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES < output.path.stat().st_size, text
    shown = text.replace(intent.intent, "")  # the question is echoed
    assert not any(needle in shown for needle in intent.needles)


@pytest.mark.parametrize(
    "intent_id",
    [
        "pylint-more-itertools-recipes-01",
        "node-test-spec-fastify-plugin-02",
        "mypy-strict-click-01",
    ],
)
def test_a_short_output_that_answers_the_intent_still_comes_back_whole(project_dir, intent_id):
    text, intent = _ask(project_dir, intent_id, "positive")
    output, _ = _intent(intent_id)
    assert output.path.read_text() in text
    assert all(needle in text for needle in intent.needles)


def test_a_weak_match_gets_a_smaller_reply(project_dir):
    # "humidity readings for january 2013" on a weather CSV without humidity: only `2013`
    # matches, so the best section holds a tenth of the intent's weight, and its near misses
    # get half the reply budget, not all of it.
    from capy.rules import load_rules

    budget = load_rules().view("executor").limits.output.intent_reply
    text, _ = _ask(project_dir, "csv-seattle-weather-06", "negative")
    assert len(text.encode("utf-8")) < budget.max_reply_bytes * 0.7, text


@pytest.mark.parametrize(
    ("intent", "kinds"),
    [
        ("are there any parsing errors in the sources", ["parsing"]),
        ("does ruff report any syntax errors", ["syntax"]),
        # No kind: the word before the failure word only asks or counts.
        ("which tests failed", ["tests"]),
        ("are there any errors", []),
        ("how many errors did the build emit", []),
        ("did it fail to find a matching version", []),
    ],
)
def test_the_kind_of_failure_an_intent_asks_about(intent, kinds):
    from capy.api.intent_shape import failure_kinds
    from capy.rules import load_rules

    assert failure_kinds(intent, load_rules()) == kinds
