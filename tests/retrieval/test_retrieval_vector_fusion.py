"""The vector list's fusion with the lexical hits, on plain ranked lists: which first hit stays
first when the two lists agree, and when they do not."""

from __future__ import annotations

from capy.retrieval.model import Candidate, SearchHit
from capy.retrieval.query import Term, parse_query
from capy.retrieval.vectors import COVERED, WEAK, agree_depth, fuse_vector_list
from capy.rules import load_rules

SEARCH = load_rules().view("search")


def hit(chunk_id: int) -> SearchHit:
    return SearchHit(chunk_id, 1, "doc", "durable", f"t{chunk_id}", f"c{chunk_id}", "", "porter", 0)


def near(chunk_id: int, cosine: float = 0.5) -> Candidate:
    return Candidate(chunk_id, 1, "doc", "durable", f"t{chunk_id}", f"c{chunk_id}", cosine)


def fused(lexical: list[int], vector: list[int], weight: float, agree_within: int) -> list[int]:
    hits, nearest = [hit(i) for i in lexical], [near(i) for i in vector]
    return [h.chunk_id for h in fuse_vector_list(hits, nearest, weight, 5, SEARCH, agree_within)]


def terms(count: int) -> tuple[Term, ...]:
    return parse_query(" ".join(f"word{i}" for i in range(count)), SEARCH).terms


def test_a_lexical_first_hit_the_vector_list_ranks_high_stays_first() -> None:
    # The vector list ranks 1 second: both lists agree on it, so it stays first.
    assert fused([1, 2], [9, 1, 8], 8.0, agree_within=3)[0] == 1


def test_a_lexical_first_hit_the_vector_list_ranks_far_down_is_no_agreement() -> None:
    # The vector list holds 1 only at rank 7: the lists disagree, and the fused order decides.
    vector = [9, 8, 7, 6, 5, 4, 1]
    assert fused([1, 2], vector, 8.0, agree_within=3)[0] == 9
    # 0: anywhere in the vector list counts.
    assert fused([1, 2], vector, 8.0, agree_within=0)[0] == 1


def test_only_a_short_weak_query_needs_the_vector_list_to_rank_its_first_hit_high() -> None:
    settings = SEARCH.vectors
    short, long = terms(settings.long_query_terms - 1), terms(settings.long_query_terms)
    assert 0 < agree_depth(WEAK, short, SEARCH) < settings.depth
    assert agree_depth(WEAK, long, SEARCH) == 0  # a long query's weak hit holds several words
    assert agree_depth(COVERED, short, SEARCH) == 0


def test_a_weak_first_hit_holding_a_named_query_term_is_agreed_on_anywhere() -> None:
    # "E0599 fix": the error chunk holds the code as typed, so the vector list holding it at
    # any rank is agreement; a chunk holding only `fix` (or `e0599` in another case) is not.
    settings = SEARCH.vectors
    query = parse_query("E0599 fix", SEARCH).terms
    coded = SearchHit(1, 1, "rustc", "durable", "", "error[E0599]: no method", "", "porter", 0)
    plain = SearchHit(2, 1, "page", "durable", "", "how to fix a flaky test", "", "porter", 0)
    assert agree_depth(WEAK, query, SEARCH, coded) == 0
    assert agree_depth(WEAK, query, SEARCH, plain) == settings.agree_within_weak
    lower = SearchHit(3, 1, "doc", "durable", "", "see e0599 in the index", "", "porter", 0)
    assert agree_depth(WEAK, query, SEARCH, lower) == settings.agree_within_weak
