"""Query sanitising: whatever the text, the FTS5 query is well-formed and means what was typed."""

from __future__ import annotations

import sqlite3

import pytest

from capy.retrieval.query import (
    Term,
    clean_text,
    fts_quote,
    parse_query,
    porter_phrases,
    porter_query,
    trigram_query,
)


def texts(query, search_rules) -> list[str]:
    return [term.text for term in parse_query(query, search_rules).terms]


def test_stopwords_and_filler_are_dropped(search_rules):
    # ("roll back" would be one compound term, see test_retrieval_morphology.py)
    assert texts("please show me how to revert the deploy", search_rules) == ["revert", "deploy"]


def test_a_query_of_stopwords_only_runs_unfiltered(search_rules):
    assert texts("what is this", search_rules) == ["what", "is", "this"]


def test_negations_stay(search_rules):
    assert texts("command not found", search_rules) == ["command", "not", "found"]


def test_operators_and_syntax_characters_are_stripped(search_rules):
    query = "NOT (title:secret) AND foo* OR bar^2 NEAR(x y) {a b} [c] ~d"
    # NEAR goes with "(", single characters are below min_term_chars.
    assert texts(query, search_rules) == ["title", "secret", "foo", "bar"]


def test_lowercase_operator_words_are_words(search_rules):
    # FTS5 only reads upper-case AND/OR/NOT/NEAR as operators; "near" is an ordinary word.
    assert texts("near cache", search_rules) == ["near", "cache"]


def test_quoted_phrase_is_kept_whole_with_its_stopwords(search_rules):
    terms = parse_query('"database is locked" sqlite', search_rules).terms
    assert terms[0] == Term("database is locked", phrase=True)
    assert terms[1].text == "sqlite"


def test_unbalanced_quote_is_ignored(search_rules):
    assert texts('"unterminated phrase', search_rules) == ["unterminated", "phrase"]


def test_colons_split_instead_of_gluing(search_rules):
    assert texts("orders 10:14", search_rules) == ["orders", "10", "14"]


def test_identifiers_survive(search_rules):
    query = "ErrCorruptRecord test_refresh_token_expiry Retry-After wp-login.php --no-cache"
    assert texts(query, search_rules) == query.split()


def test_trailing_sentence_punctuation_is_dropped(search_rules):
    assert texts("why is it locked?", search_rules) == ["locked"]


def test_terms_without_letters_or_digits_are_dropped(search_rules):
    assert texts("🎉 -- ... ¯\\_(ツール)_/¯ ok", search_rules) == ["ツール", "ok"]


def test_duplicates_collapse_case_insensitively(search_rules):
    assert texts("Cache cache CACHE miss", search_rules) == ["Cache", "miss"]


def test_max_terms(search_rules):
    words = [f"word{i}" for i in range(40)]
    assert texts(" ".join(words), search_rules) == words[: search_rules.query.max_terms]


def test_max_bytes_cuts_on_a_character_boundary(search_rules):
    cleaned = clean_text("é" * 5000, search_rules.query.max_bytes)
    assert len(cleaned.encode()) <= search_rules.query.max_bytes
    assert set(cleaned) == {"é"}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\x00b", "a b"),
        ("tab\there", "tab here"),
        ("bidi\u202eflip", "bidi flip"),
        ("lone \ud800 surrogate", "lone  surrogate"),
        (b"bytes \xff in", "bytes \ufffd in"),
        (None, ""),
        (42, "42"),
    ],
)
def test_clean_text(raw, expected):
    assert clean_text(raw, 1024) == expected


def test_synonyms_are_or_ed_in_the_porter_query(search_rules):
    terms = parse_query("db timeout", search_rules).terms
    assert porter_query(terms, conjunction="AND") == (
        '("db" OR "database" OR "datastore") AND '
        # "time out": the pack's compound, written apart
        '("timeout" OR "time out" OR "timed out" OR "deadline exceeded")'
    )


def test_an_or_query_names_each_phrase_once(search_rules):
    """bm25 sums a phrase once per naming: "error" and "traceback" share a synonym group, and
    "Error" is the same phrase to both tokenizers."""
    terms = parse_query("error traceback Error", search_rules).terms
    phrases = porter_phrases(terms)
    assert len(phrases) == len({phrase.lower() for phrase in phrases})
    assert {'"error"', '"traceback"', '"exception"'} <= set(phrases)
    assert porter_query(terms, conjunction="OR") == " OR ".join(phrases)


def test_trigram_query_leaves_synonyms_out(search_rules):
    terms = parse_query("db timeout", search_rules).terms
    assert trigram_query(terms, conjunction="OR", min_chars=3) == '"timeout"'
    # AND would silently lose "db" (too short for a trigram): not run at all.
    assert trigram_query(terms, conjunction="AND", min_chars=3) is None


def test_corrections_join_both_lists(search_rules):
    (term,) = parse_query("circut", search_rules).terms
    corrected = Term(term.text, corrections=("circuit",))
    assert porter_query((corrected,), conjunction="AND") == '("circut" OR "circuit")'
    assert trigram_query((corrected,), conjunction="AND", min_chars=3) == '("circut" OR "circuit")'


def test_fts_quote_doubles_quotes():
    assert fts_quote('say "hi"') == '"say ""hi"""'


@pytest.mark.parametrize(
    "query",
    [
        'NOT AND OR NEAR "',
        '""""',
        "title:x content:y",
        "(((",
        "a* ^b c:d",
        '"NEAR(a b, 3)"',
        "\x00\x01\x02",
        "- -- --- +",
    ],
)
def test_built_queries_are_valid_fts5(search_rules, query):
    """Run what the builder makes against a real FTS5 table (stdlib SQLite has FTS5 too)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, content, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE g USING fts5(title, content, tokenize='trigram')")
    terms = parse_query(query, search_rules).terms
    for conjunction in ("AND", "OR"):
        for table, built in (
            ("t", porter_query(terms, conjunction=conjunction)),
            ("g", trigram_query(terms, conjunction=conjunction, min_chars=3)),
        ):
            if built:
                conn.execute(f"SELECT * FROM {table} WHERE {table} MATCH ?", (built,)).fetchall()


def test_a_lone_capital_letter_stays_a_term_and_a_lowercase_one_does_not(search_rules):
    # A grade or kind marker ("ranked C") names something; "I" and "a" are stopwords anyway.
    assert texts("which blocks are ranked C", search_rules) == ["blocks", "ranked", "C"]
    assert texts("is x ranked c", search_rules) == ["ranked"]
    assert texts("can I see A", search_rules) == ["see"]
