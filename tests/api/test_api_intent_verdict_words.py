"""Words of an intent that describe rather than name, on real captured outputs (dev half).

The "nothing matched" verdict rests on an intent's specific terms (`capy.api.intent_specific`):
when every one is absent, nothing can answer. Two kinds of word were taken for such a term
though they name nothing the output must print: the name of a character ("coordinates
spelled with a *hyphen*", on a codespell run whose answer reads `co-ordinates`), and a
compound the agent coins with hyphens ("the *newer-than-msrv* warnings", on a clippy run
that says "current MSRV"). Everything runs for real: `capy_execute`'s library call on `cat`
of the captured file, a real encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import pytest

from tests.niah_real_helpers import ask, dev_intent


def test_a_character_name_is_no_missing_specific_term(project_dir):
    # On main the verdict said "It never holds `hyphen`" and withheld the one line that answers.
    text, intent = ask(project_dir, "codespell-sphinx-04", "positive")
    assert "never holds" not in text, text
    assert all(needle in text for needle in intent.needles), text


def _absence(intent_id: str, query: str | None = None):
    from capy.api.intent_specific import specific_absence
    from capy.rules import load_rules

    output, intent = dev_intent(intent_id)
    text = output.path.read_text(encoding="utf-8")
    return specific_absence([text], query or intent.intent, load_rules())


def test_a_hyphenated_compound_is_held_when_the_output_holds_its_specific_words():
    # clippy's run never prints "newer-than-msrv", but it holds `msrv` on every such warning:
    # main counted the compound as a missing specific term, which a reply with sections then
    # reported as "The output never holds `newer-than-msrv`".
    absence = _absence("clippy-pedantic-semver-07")
    assert absence.missing == []
    assert not absence.verdict


@pytest.mark.parametrize(
    ("query", "missing"),
    [
        # A compound whose specific word is nowhere stays missing, and settles the verdict.
        ("any newer-than-frobnik warnings", ["newer-than-frobnik"]),
        # A compound the output holds whole is held, as before.
        ("what does incompatible-msrv mean", []),
    ],
)
def test_a_compound_stays_missing_when_its_specific_word_is_absent(query, missing):
    absence = _absence("clippy-pedantic-semver-07", query)
    assert absence.missing == missing
    assert absence.verdict == bool(missing)
