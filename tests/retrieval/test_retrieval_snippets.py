"""Smart snippets: whole when small, windows around matches when large, always bounded."""

from __future__ import annotations

from capy.retrieval.matching import compile_terms, term_spans
from capy.retrieval.query import Term
from capy.retrieval.snippets import make_snippet


def snippet_for(text: str, words: list[str], search_rules) -> str:
    patterns = compile_terms(tuple(Term(word) for word in words))
    return make_snippet(text, term_spans(text, patterns), search_rules.snippets)


def test_small_chunk_is_returned_whole(search_rules):
    text = "short chunk with the answer"
    assert snippet_for(text, ["answer"], search_rules) == text


def test_large_chunk_gives_windows_around_matches(search_rules):
    rules = search_rules.snippets
    filler = "lorem ipsum dolor sit amet " * 200
    text = filler + "the NEEDLE sits here " + filler + "and a second needle there " + filler
    snippet = snippet_for(text, ["needle"], search_rules)
    assert "NEEDLE sits here" in snippet
    assert "second needle there" in snippet
    assert snippet.startswith(rules.ellipsis) and snippet.endswith(rules.ellipsis)
    assert snippet.count(rules.ellipsis) == 3  # before, between, after
    assert len(snippet.encode()) <= rules.max_bytes


def test_close_matches_merge_into_one_window(search_rules):
    rules = search_rules.snippets
    filler = "x " * 2000
    text = filler + "alpha then beta " + filler
    snippet = snippet_for(text, ["alpha", "beta"], search_rules)
    assert snippet.count(rules.ellipsis) == 2
    assert "alpha then beta" in snippet


def test_snippet_is_bounded_even_with_matches_everywhere(search_rules):
    rules = search_rules.snippets
    text = "match é " * 5000
    snippet = snippet_for(text, ["match"], search_rules)
    assert len(snippet.encode()) <= rules.max_bytes


def test_no_match_gives_the_head(search_rules):
    rules = search_rules.snippets
    text = "head line\n" + "body " * 1000
    snippet = snippet_for(text, ["absent"], search_rules)
    assert snippet.startswith("head line")
    assert len(snippet.encode()) <= rules.max_bytes


def test_edges_snap_to_line_breaks(search_rules):
    lines = [f"line {i:04d} with some padding text" for i in range(200)]
    lines[100] = "line 0100 holds the TARGET word"
    snippet = snippet_for("\n".join(lines), ["target"], search_rules)
    ellipsis = search_rules.snippets.ellipsis
    body = snippet.removeprefix(ellipsis).removesuffix(ellipsis)
    assert body.startswith("line ") and body.endswith("text")
