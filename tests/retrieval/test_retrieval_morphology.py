"""Word forms from the search pack's morphology section, on lines of real captured outputs.

Each case is a line an output of fixtures/niah-real printed and a question's words that porter
alone cannot bring to it: a compound written apart, a negated form, an identifier's parts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.retrieval.matching import compile_terms, term_spans
from capy.retrieval.query import parse_query

OUTPUTS = Path(__file__).parents[2] / "fixtures" / "niah-real" / "outputs"


def _line(file: str, holding: str) -> str:
    for line in (OUTPUTS / file).read_text("utf-8").splitlines():
        if holding in line:
            return line
    raise AssertionError(f"{file} has no line holding {holding!r}")


def _found(query: str, text: str, search_rules) -> list[list[str]]:
    """What each query term matches in `text`."""
    spans = term_spans(text, compile_terms(parse_query(query, search_rules).terms))
    return [[text[start:end] for start, end in term] for term in spans]


@pytest.mark.parametrize(
    ("query", "file", "holding", "expected"),
    [
        # Adjacent words whose stems are a compound's parts meet the joined word.
        ("timing out", "git-log-stat-capy.txt", "a timeout or a settle", [["timeout"]]),
        # A word meets its negated form.
        ("case-sensitive", "pydoc-boltons-iterutils.html", "case-insensitive",
         [["case-insensitive"]]),
        ("used", "pylint-more-itertools-recipes.txt", "Unused variable 'first'",
         [["Unused", "unused"]]),
    ],
)  # fmt: skip
def test_a_question_word_meets_the_form_the_output_printed(
    query, file, holding, expected, search_rules
):
    text = _line(file, holding)
    assert _found(query, text, search_rules) == expected, text


def test_compounds_join_adjacent_words_even_across_a_stopword(search_rules):
    terms = parse_query("why does the log in page time out", search_rules).terms
    assert [(term.text, term.forms) for term in terms] == [
        ("log in", ("login",)),
        ("page", ()),
        ("time out", ("timeout",)),
    ]
    # The joined word brings its synonym group along ("timed out", "deadline exceeded").
    assert "deadline exceeded" in terms[2].synonyms


def test_identifiers_match_their_parts_joined_and_camel_case_as_words(search_rules):
    terms = parse_query("maxRetries max_retries case-sensitive", search_rules).terms
    forms = {term.text: term.forms for term in terms}
    assert forms["maxRetries"] == ("max retries",)
    assert forms["max_retries"] == ("maxretries",)
    assert forms["case-sensitive"][0] == "casesensitive"
    negated = terms[2].forms  # a short query: negated forms are plain forms
    assert "case insensitive" in negated
    assert "caseinsensitive" in negated


def test_negation_keeps_to_the_endings_the_pack_lists(search_rules):
    terms = parse_query("installed valid formation", search_rules).terms
    negated = {term.text: term.forms for term in terms}
    assert "uninstalled" in negated["installed"]
    assert "ininstalled" not in negated["installed"]  # in- takes no -ed: not "stalled"
    assert "invalid" in negated["valid"]
    assert negated["formation"] == ()  # no in-: "information" is not its negation
    # A negated word is searched as it is, not widened to its base.
    assert "used" not in parse_query("unused", search_rules).terms[0].forms


def test_a_long_query_names_negated_forms_in_and_groups_only(search_rules):
    """In long prose an OR-ed negated form ranks the opposite concept; a short lookup needs
    it in OR too ("how do I sort case-sensitive" finds `case-insensitive` only by OR)."""
    from capy.retrieval.query import porter_query

    short = parse_query("never used", search_rules).terms
    assert '"unused"' in porter_query(short, conjunction="OR")
    long = parse_query("which variable was never used in the recipes module", search_rules).terms
    assert '"unused"' in porter_query(long, conjunction="AND")
    assert '"unused"' not in porter_query(long, conjunction="OR")


def test_search_and_used_are_search_terms_again(search_rules):
    """Stopwords say how to ask; these name things outputs print."""
    words = [t.text for t in parse_query("the search input and memory used", search_rules).terms]
    assert words == ["search", "input", "memory", "used"]


def test_a_search_stems_each_word_once(search_rules, monkeypatch):
    """Parsing stems the query's words for compounds, and matching and the boosts stem them
    again: one cache serves them all, so a word asked again is not stemmed again."""
    from capy.retrieval import matching, morphology, porter

    stemmed = []

    def counting(word: str) -> str:
        stemmed.append(word)
        return porter.porter_stem(word)

    monkeypatch.setattr(matching, "porter_stem", counting)
    monkeypatch.setattr(morphology, "porter_stem", counting)
    matching.stem.cache_clear()
    query = "connection timing unreliably reconnected"
    compile_terms(parse_query(query, search_rules).terms)
    assert stemmed, "nothing was stemmed: the query no longer exercises the stemmer"
    stemmed.clear()
    compile_terms(parse_query(query, search_rules).terms)
    assert stemmed == []
