"""Intent replies on JSON records and on small result sets, on real outputs of the niah-real set.

Two defects of the line picking, each checked on a dev-half output of the set:
- a JSON line holding many records (`eslint -f json` prints a file's messages on one line) was
  cut to a byte window around its first match, so the record the intent named was cut away;
  it is now shown record by record, matching records first, in the output's own spelling;
- query words weighed log(hits / hits holding them), zero when every hit held them, so a
  substring inside an unrelated word decided which lines were shown; words now weigh by their
  smoothed rarity over the whole output's lines, a whole word above a substring.
Everything runs for real: `capy_execute`'s library call on `cat` of the captured file, a real
encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from tests.niah_real_helpers import dev_intent

SET = Path(__file__).parents[2] / "fixtures" / "niah-real"
ESLINT_JSON = SET / "outputs" / "eslint-qs.json"


@pytest.fixture(scope="module")
def rules():
    """The shipped packs alone, validated once (no overlays can exist in tests)."""
    from capy.rules.ruleset import build_ruleset

    ruleset = build_ruleset()
    assert ruleset.ok, ruleset.diagnostics
    return ruleset


_intent = dev_intent


def _ask(project_dir: Path, intent_id: str) -> tuple[str, tuple[str, ...]]:
    output, intent = _intent(intent_id)
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    return reply.text, intent.needles


def test_the_record_an_intent_names_is_shown_whole_from_a_line_of_records(project_dir):
    # parse.js's ten lint messages sit on one 2 KB line; the one about normalizeParseOptions
    # is the ninth, far past a 400 B window around the first "complex".
    text, needles = _ask(project_dir, "eslint-qs-05")
    assert all(needle in text for needle in needles), text


@pytest.mark.parametrize(
    "intent_id",
    [
        # every hit holds "test" and "pass": the one line naming the test was never picked
        "pytest-humanize-ra-03",
        # "errored" weighed nothing among hits that all hold it; the summary line went unshown
        "pytest-humanize-ra-02",
    ],
)
def test_words_every_hit_holds_still_pick_the_answer_line(project_dir, intent_id):
    text, needles = _ask(project_dir, intent_id)
    assert all(needle in text for needle in needles), text


def test_a_minified_json_output_is_chunked_in_its_own_spelling(rules):
    from capy.chunking import chunk_text

    text = ESLINT_JSON.read_text(encoding="utf-8")
    chunks = chunk_text(text, label="eslint-qs.json", rules=rules.view("chunking"))
    joined = "\n".join(chunk.content for chunk in chunks)
    assert '"ruleId":"eqeqeq","severity":2,' in joined
    assert '"ruleId": "' not in joined


def _weights(query: str, text: str, rules):
    from capy.api.line_weights import output_term_weights
    from capy.retrieval.matching import compile_terms
    from capy.retrieval.query import parse_query

    patterns = compile_terms(parse_query(query, rules.view("search")).terms)
    starts = [0] + [n + 1 for n, c in enumerate(text) if c == "\n"]
    return list(zip(patterns, output_term_weights(text, starts, patterns), strict=True))


def _messages_line() -> str:
    """The `"messages":[...]` line of parse.js as the chunker writes it (its own spelling)."""
    files = json.loads(ESLINT_JSON.read_text(encoding="utf-8"))
    parse = next(item for item in files if item["filePath"].endswith("/parse.js"))
    return '"messages":' + json.dumps(parse["messages"], ensure_ascii=False, separators=(",", ":"))


def test_a_record_line_shows_matching_records_whole_and_in_order(rules):
    from capy.api.record_lines import record_view

    line = _messages_line()
    shown = record_view(line, _weights("complexity of normalizeParseOptions", line, rules), rules)
    assert shown is not None
    assert shown.startswith('"messages":[')
    record = (
        '{"ruleId":"complexity","severity":1,"message":"Function \'normalizeParseOptions\' has a '
        'complexity of 40. Maximum allowed is 10.","line":436'
    )
    assert record in shown
    limit = rules.view("executor").limits.output.intent_reply.records.max_line_bytes
    assert len(shown.encode("utf-8")) <= limit
    assert "…" in shown  # the records left out are marked in place


def test_a_line_that_does_not_reserialise_exactly_is_left_to_the_byte_window(rules):
    from capy.api.record_lines import record_view

    line = _messages_line().replace('"severity":1', '"severity" : 1', 1)
    assert record_view(line, _weights("complexity", line, rules), rules) is None
    assert record_view("not json at all " * 40, _weights("json", "json", rules), rules) is None


def test_a_whole_word_weighs_more_than_the_same_letters_inside_another_word(rules):
    from capy.api.line_weights import match_weight, whole_word

    text = "the scrollable list\nroll back the migration"
    assert not whole_word(text, (6, 10))  # "roll" inside "scrollable"
    assert whole_word(text, (20, 24))
    factor = rules.view("executor").limits.output.intent_reply.line_weights.substring_factor
    assert match_weight(text, (6, 10), 2.0, factor) < match_weight(text, (20, 24), 2.0, factor)


def test_a_word_on_every_line_still_weighs_something(rules):
    text = "test_a PASSED\ntest_b PASSED\ntest_c FAILED"
    weights = dict(
        (pattern.term.text, weight) for pattern, weight in _weights("passed failed", text, rules)
    )
    assert 0 < weights["passed"] < weights["failed"]
