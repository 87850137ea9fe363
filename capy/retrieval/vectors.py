"""The vector list: one more ranked list, fused with the lexical ranking, gated by how well the
lexical lists did.

A corpus that has vectors offers `nearest(query, limit, filters)` (chunks by cosine, best first,
each `Candidate.rank` its cosine); one without them has no such method, or returns nothing, and
search is the lexical search alone. The list joins the lexical hits (after boosts) by weighted
Reciprocal Rank Fusion, with a weight the search pack's `vectors` sets by the lexical outcome:
- `and_found`: the AND pass found results: the query's own words are in them;
- `covered`: no AND result, but the best lexical hit holds at least `coverage` of the query's
  terms (a keyword query whose words are spread out); `covered_long` instead when the query
  has `long_query_terms` terms or more (and `coverage_long` the share it needs): a prose
  question, whose every word no passage holds, where bm25 ranks by incidental words and the
  meaning is worth more;
- `weak`: no AND result and the best lexical hit holds few of the query's terms, or nothing was
  found: the query is likely said in other words than its answer. A vector hit alone (nothing
  lexical) must then reach `min_similarity_alone`, so a question about something absent still
  comes back empty; a query worded as a sentence (it holds one of the pack's English
  stopwords: "shift the caret by an offset", not "kafka zookeeper ensemble") needs only
  `min_similarity_alone_worded`. A list of names none of the scope holds asks about something
  absent; a sentence none of whose words the scope holds is what the vector list is for.

Where both lists agree on the lexical ranking's first hit (the vector list holds it too), it
stays first (`keep_agreed_first`): a hit both lists found is the safest answer, and an exact
keyword hit never loses first place to a near neighbour that only one list saw. How high the
vector list must rank it to agree depends on how much the lexical side knows: anywhere in the
list, unless the gate is `weak` for a short query (its best hit holds one or two of a few
words); then only among the vector list's first `agree_within_weak`, and a lexical first hit
the vector list ranks below that is a disagreement the fused order decides. A long query's
weak hit still holds several of its words, and keeps the looser rule; so does a hit that holds,
as typed, a query term the pack's entity rules take for a name (`keep_named_first`): "E0599
fix" is weak (the error chunk holds one word of two) and the vector list, which reads the
code as noise, ranks the error chunk below pages about fixing things, yet the exact code is
the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from capy.retrieval.boosts import find_matches
from capy.retrieval.matching import compile_terms
from capy.retrieval.model import Candidate, Corpus, SearchFilters, SearchHit
from capy.retrieval.query import EDGE_PUNCTUATION, Term
from capy.retrieval.snippets import make_snippet
from capy.rules.views.search import SearchPack

VECTOR_LAYER = "vector"
AND_FOUND, COVERED, COVERED_LONG, WEAK = "and_found", "covered", "covered_long", "weak"


def nearest_of(corpus: Corpus) -> Callable[..., list[Candidate]] | None:
    return getattr(corpus, "nearest", None)


def gate(
    hits: Sequence[SearchHit],
    and_found: int,
    terms: tuple[Term, ...],
    coverage: float,
    long_query_terms: int = 0,
    coverage_long: float | None = None,
) -> str:
    """Which of the pack's weights applies (see the module doc)."""
    if and_found > 0:
        return AND_FOUND
    if not hits or not terms:
        return WEAK
    matches = find_matches(hits[0].title, hits[0].content, compile_terms(terms))
    held = sum(
        1 for title, content in zip(matches.title, matches.content, strict=True) if title or content
    )
    long = is_long(terms, long_query_terms)
    if held / len(terms) < (coverage_long if long and coverage_long is not None else coverage):
        return WEAK
    return COVERED_LONG if long else COVERED


def is_long(terms: tuple[Term, ...], long_query_terms: int) -> bool:
    """A prose question: `long_query_terms` terms or more (0: no query is long)."""
    return 0 < long_query_terms <= len(terms)


def agree_depth(
    chosen: str, terms: tuple[Term, ...], rules: SearchPack, first: SearchHit | None = None
) -> int:
    """How high the vector list must rank the lexical first hit `first` to agree on it
    (0: anywhere)."""
    settings = rules.vectors
    if chosen != WEAK or is_long(terms, settings.long_query_terms):
        return 0
    if settings.keep_named_first and first is not None and names_a_term(first, terms, rules):
        return 0
    return settings.agree_within_weak


def names_a_term(hit: SearchHit, terms: tuple[Term, ...], rules: SearchPack) -> bool:
    """Whether `hit` holds, as typed, a query term the pack's entity rules take for a name
    (`E0599`, `SC2086`, `CVE-2024-3094`, `parse_args`): an exact hit on an identifier."""
    entities = rules.entities
    return any(
        not term.phrase
        and entities.is_entity(term.text)
        and (term.text in hit.title or term.text in hit.content)
        for term in terms
    )


def alone_floor(query: str, rules: SearchPack) -> float:
    """The cosine a vector hit needs when no lexical list found anything (see the module doc)."""
    settings = rules.vectors
    worded = settings.min_similarity_alone_worded
    if worded is None:
        return settings.min_similarity_alone
    english = rules.stopwords.function_words
    words = (word.strip(EDGE_PUNCTUATION).lower() for word in query.split())
    return worded if any(word in english for word in words) else settings.min_similarity_alone


def join_vector_list(
    corpus: Corpus,
    query: str,
    hits: list[SearchHit],
    and_found: int,
    terms: tuple[Term, ...],
    limit: int,
    filters: SearchFilters,
    rules: SearchPack,
) -> list[SearchHit]:
    """The lexical hits with the vector list fused in by the gate's weight (unchanged when the
    corpus has no vectors or the weight is 0)."""
    settings = rules.vectors
    nearest = nearest_of(corpus)
    if nearest is None or settings.depth < 1:
        return hits
    chosen = gate(
        hits,
        and_found,
        terms,
        settings.coverage,
        settings.long_query_terms,
        settings.coverage_long,
    )
    weight = settings.weight.of(chosen)
    if weight <= 0:
        return hits
    vector = nearest(query, settings.depth, filters)
    if not hits:
        floor = alone_floor(query, rules)
        vector = [c for c in vector if c.rank >= floor]
    first = hits[0] if hits else None
    depth = agree_depth(chosen, terms, rules, first)
    return fuse_vector_list(hits, vector, weight, limit, rules, depth)


def fuse_vector_list(
    hits: list[SearchHit],
    vector: Sequence[Candidate],
    weight: float,
    limit: int,
    rules: SearchPack,
    agree_within: int = 0,
) -> list[SearchHit]:
    """The lexical hits and the vector list (best first) by weighted RRF, the lexical first hit
    kept first where the vector list ranks it among its first `agree_within` (0: anywhere)."""
    settings = rules.vectors
    if not vector:
        return hits
    k = rules.fusion.rrf_k
    scores: dict[int, float] = {}
    by_id: dict[int, SearchHit] = {}
    for rank, hit in enumerate(hits, start=1):
        scores[hit.chunk_id] = 1.0 / (k + rank)
        by_id[hit.chunk_id] = hit
    for rank, candidate in enumerate(vector, start=1):
        scores[candidate.chunk_id] = scores.get(candidate.chunk_id, 0.0) + weight / (k + rank)
        if candidate.chunk_id not in by_id:
            by_id[candidate.chunk_id] = _vector_hit(candidate, rules)
    order = sorted(scores, key=lambda chunk_id: -scores[chunk_id])
    if settings.keep_agreed_first and hits:
        first = hits[0].chunk_id
        agreeing = vector[:agree_within] if agree_within > 0 else vector
        if any(candidate.chunk_id == first for candidate in agreeing):
            order.remove(first)
            order.insert(0, first)
    order = order[:limit]
    return [_rescored(by_id[chunk_id], scores[chunk_id]) for chunk_id in order]


def _vector_hit(candidate: Candidate, rules: SearchPack) -> SearchHit:
    from capy.clip import clip_line

    return SearchHit(
        chunk_id=candidate.chunk_id,
        source_id=candidate.source_id,
        source_label=candidate.source_label,
        kind=candidate.kind,
        title=clip_line(candidate.title, rules.snippets.title_chars, rules.snippets.ellipsis),
        content=candidate.content,
        snippet=make_snippet(candidate.content, [], rules.snippets),
        layer=VECTOR_LAYER,
        score=0.0,
    )


def _rescored(hit: SearchHit, score: float) -> SearchHit:
    from dataclasses import replace

    return replace(hit, score=round(score, 6))
