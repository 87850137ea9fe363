"""RRF, fuzzy correction, diversification, term matching and boosts, one small case at a time."""

from __future__ import annotations

import pytest

from capy.retrieval.boosts import Matches, proximity_boost, smallest_window, term_weights
from capy.retrieval.diversity import diversify
from capy.retrieval.fusion import reciprocal_rank_fusion
from capy.retrieval.fuzzy import closest, levenshtein
from capy.retrieval.matching import compile_terms, stem, term_spans
from capy.retrieval.model import Candidate
from capy.retrieval.query import Term


def candidate(chunk_id: int, source_id: int = 1) -> Candidate:
    return Candidate(chunk_id, source_id, f"s{source_id}", "durable", "", "", 0.0)


def test_rrf_sums_reciprocal_ranks_and_names_the_layers():
    fused = reciprocal_rank_fusion(
        {"porter": [candidate(1), candidate(2)], "trigram": [candidate(2), candidate(3)]}, k=60
    )
    assert [entry.candidate.chunk_id for entry in fused] == [2, 1, 3]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert [entry.layer for entry in fused] == ["rrf", "porter", "trigram"]


def test_rrf_counts_a_repeated_chunk_once():
    fused = reciprocal_rank_fusion({"porter": [candidate(1), candidate(1)]}, k=60)
    assert len(fused) == 1
    assert fused[0].score == pytest.approx(1 / 61)


@pytest.mark.parametrize(
    ("a", "b", "limit", "expected"),
    [
        ("kitten", "sitting", 3, 3),
        ("kitten", "sitting", 2, 3),  # over the limit: limit + 1
        ("circut", "circuit", 1, 1),
        ("idempotnet", "idempotent", 2, 2),
        ("", "abc", 3, 3),
        ("same", "same", 0, 0),
    ],
)
def test_levenshtein(a, b, limit, expected):
    assert levenshtein(a, b, limit) == expected


def test_closest_prefers_the_nearest_then_the_more_frequent():
    # Words arrive most frequent first: "parse" before "parsec".
    assert closest("parsee", ["parse", "parsec", "parser"], 1) == ("parse",)
    assert closest("xxxxxx", ["parse"], 1) == ()


def test_fuzzy_bands_scale_with_length(search_rules):
    fuzzy = search_rules.fuzzy
    assert fuzzy.max_distance("four") == 0
    assert fuzzy.max_distance("circut") == 1
    assert fuzzy.max_distance("idempotnet") == 2


def test_diversify_holds_back_a_third_hit_from_one_source():
    items = [("a", 1), ("b", 1), ("c", 1), ("d", 2)]
    ordered = diversify(items, lambda item: item[1], max_per_source=2)
    assert [name for name, _ in ordered] == ["a", "b", "d", "c"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [("locks", "lock"), ("locked", "lock"), ("locking", "lock"), ("retries", "retri")],
)
def test_stem_folds_like_porter_step_one(word, expected):
    assert stem(word) == expected


def test_term_spans_match_words_phrases_and_substrings():
    terms = (Term("locked"), Term("database is", phrase=True), Term("corrupt"))
    text = "The database is locks-free; ErrCorruptRecord was LOCKED."
    spans = term_spans(text, compile_terms(terms))
    assert [text[s:e] for s, e in spans[0]] == ["locks", "LOCKED"]
    assert [text[s:e] for s, e in spans[1]] == ["database is"]
    assert [text[s:e] for s, e in spans[2]] == ["Corrupt"]  # inside an identifier


def test_term_spans_find_every_word_form_and_phrases_across_punctuation():
    """Only words that start like a term are stemmed; every form porter folds still counts."""
    terms = (Term("policy"), Term("stop"), Term("max_chunk_bytes"), Term("go version", phrase=True))
    text = "Policies: the policy stopped; stopping max-chunk-bytes (go) version, go_version."
    spans = term_spans(text, compile_terms(terms))
    assert [text[s:e] for s, e in spans[0]] == ["Policies", "policy"]
    assert [text[s:e] for s, e in spans[1]] == ["stopped", "stopping"]
    assert [text[s:e] for s, e in spans[2]] == ["max-chunk-bytes"]
    assert [text[s:e] for s, e in spans[3]] == ["go) version", "go_version"]


def test_term_spans_start_only_at_word_starts():
    """A term inside a longer word is no word match (unicode61 split it otherwise); `_` and
    punctuation start a word, a letter or digit does not."""
    text = "deadlock unlocked x9locks _locks (Locked) çlock"
    spans = term_spans(text, compile_terms((Term("lock"),)))
    assert [text[s:e] for s, e in spans[0]] == ["locks", "Locked"]


def test_smallest_window_measures_the_gap_between_terms():
    assert smallest_window([[(0, 4)], [(5, 9)]]) == (1, 8)
    assert smallest_window([[(0, 4), (100, 104)], [(50, 54), (106, 110)]]) == (2, 8)


def test_proximity_prefers_adjacent_terms_and_needs_two():
    near = Matches(title=[[], []], content=[[(0, 4)], [(5, 9)]])
    far = Matches(title=[[], []], content=[[(0, 4)], [(500, 504)]])
    alone = Matches(title=[[], []], content=[[(0, 4)], []])
    weights = [0.5, 0.5]
    assert proximity_boost(near, weights, 1.0) > proximity_boost(far, weights, 1.0) > 0
    assert proximity_boost(alone, weights, 1.0) == 0


def test_proximity_ignores_long_queries():
    spans = [[(6 * n, 6 * n + 5)] for n in range(6)]
    six_terms = Matches(title=[[] for _ in spans], content=spans)
    weights = [1 / 6] * 6
    assert proximity_boost(six_terms, weights, 1.0, max_terms=6) > 0
    assert proximity_boost(six_terms, weights, 1.0, max_terms=5) == 0


def test_rare_terms_weigh_more():
    common = Matches(title=[[], []], content=[[(0, 1)], []])
    both = Matches(title=[[], []], content=[[(0, 1)], [(2, 3)]])
    weights = term_weights([common, common, common, both])
    assert weights[1] > weights[0]
    assert sum(weights) == pytest.approx(1.0)
