"""How well an intent's words meet the output it asks about: the relevance floor's measure.

Search always ranks something first, so rank alone cannot say that nothing matched. The
measure here is the share of the query's weight that the best hit holds, each query term
weighted by its rarity across the output's own chunks (an inverse document frequency): a
term the output never holds weighs most, so "did any test time out" on a run without a
timeout scores low even though `test` is on every line, while a question whose rare words sit
together in one section scores near 1. A word that only frames the question (the search
pack's `intents.framing`: "how *long* did it *take*") and that the output never holds weighs
nothing: its absence says how the question is put, not that the answer is missing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store


def intent_relevance(
    chunks: Sequence[str], hits: Sequence[str], query: str, rules: RuleSet
) -> float:
    """In [0, 1]: the rarity-weighted share of the query's terms the best of `hits` holds,
    rarity counted over `chunks` (every chunk of the output). A query with no searchable term
    counts as relevant (there is nothing to judge it by)."""
    return max(hit_relevances(chunks, hits, query, rules), default=0.0)


def hit_relevances(
    chunks: Sequence[str], hits: Sequence[str], query: str, rules: RuleSet
) -> list[float]:
    """The same share for each of `hits`, in order."""
    return [sum(shares) for shares in hit_term_shares(chunks, hits, query, rules)]


def hit_term_shares(
    chunks: Sequence[str],
    hits: Sequence[str],
    query: str,
    rules: RuleSet,
    unheld: Sequence[str] = (),
) -> list[list[float]]:
    """Per hit, per query term: the share of the query's weight that term brings the hit
    (0 where the hit does not hold it). A query with no weighable term gives each hit one
    share of 1. A term among `unheld` (a kind of failure no flagged line is about) counts as
    held by no chunk and no hit, whatever its stem meets."""
    from capy.api.intent_shape import stems_of
    from capy.retrieval.matching import compile_terms, stem, term_spans
    from capy.retrieval.query import parse_query

    terms = parse_query(query, rules.view("search")).terms
    patterns = compile_terms(terms)
    unheld_stems = {stem(word.lower()) for word in unheld}
    counted = [stem(term.text.lower()) not in unheld_stems for term in terms]
    holding = [0] * len(patterns)
    for chunk in chunks:
        for term, spans in enumerate(term_spans(chunk, patterns)):
            holding[term] += bool(spans) and counted[term]
    framing = stems_of(rules.view("search").intents.framing.words)
    weights = [
        0.0 if count == 0 and stem(term.text.lower()) in framing else _rarity(len(chunks), count)
        for term, count in zip(terms, holding, strict=True)
    ]
    total = sum(weights)
    if not patterns or total <= 0:
        return [[1.0] for _ in hits]
    return [
        [
            w / total if spans and held else 0.0
            for w, spans, held in zip(weights, term_spans(hit, patterns), counted, strict=True)
        ]
        for hit in hits
    ]


def _rarity(chunks: int, holding: int) -> float:
    return math.log((chunks + 1) / (holding + 0.5))


def source_chunks(store: Store, source_id: int) -> list[str]:
    """The content of every chunk of a source, in order. Titles are left out: a command
    output's titles are capy's own label (`execute:shell:...`), and a query word inside it
    ("exec", "shell") would look common to every chunk and weigh nothing."""
    from capy.store.migrations import chunk_rowid_range

    first, last = chunk_rowid_range(source_id)
    rows = store.conn.execute(
        "SELECT content FROM chunks WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (first, last)
    ).fetchall()
    return [content or "" for (content,) in rows]
