"""The vector list: one more ranked list in the fusion, gated by how the lexical lists did.

A corpus that has vectors offers `nearest(query, limit, filters)` (chunks by cosine, best
first, each `Candidate.rank` its cosine); one without them has no such method, or returns
nothing, and search is the lexical search alone. The gate (the search pack's `vectors`) sets
the list's RRF weight by the lexical outcome:
- strong: the AND pass found results and the vector list ranks one of the lexical top
  `agree_top` in its own top `agree_top`; AND results keep their tier ahead of the rest.
- disagree: the AND pass found results, none of which the vector list ranks near the top.
- weak: no AND result (only OR or fuzzy passes found anything, or nothing did); a vector hit
  alone must then reach `min_similarity_alone`, so a query about something absent still
  comes back empty.
"""

from __future__ import annotations

from collections.abc import Callable

from capy.retrieval.fusion import Fused
from capy.retrieval.model import Candidate, Corpus, SearchFilters
from capy.rules.views.search import SearchPack

VECTOR_LAYER = "vector"
STRONG, DISAGREE, WEAK = "strong", "disagree", "weak"


def nearest_of(corpus: Corpus) -> Callable[..., list[Candidate]] | None:
    return getattr(corpus, "nearest", None)


def gate(fused: list[Fused], primary: int | None, vector: list[Candidate], top: int) -> str:
    """Which of the pack's weights applies (see the module doc)."""
    and_found = len(fused) if primary is None else primary
    if and_found == 0:
        return WEAK
    lexical = {entry.candidate.chunk_id for entry in fused[: min(top, and_found)]}
    if lexical & {candidate.chunk_id for candidate in vector[:top]}:
        return STRONG
    return DISAGREE


def join_vector_list(
    corpus: Corpus,
    query: str,
    fused: list[Fused],
    primary: int | None,
    filters: SearchFilters,
    rules: SearchPack,
) -> tuple[list[Fused], int | None]:
    """The lexical fusion with the vector list added by the gate's weight (unchanged when the
    corpus has no vectors or the weight is 0)."""
    settings = rules.vectors
    nearest = nearest_of(corpus)
    if nearest is None or settings.depth < 1:
        return fused, primary
    vector = nearest(query, settings.depth, filters)
    if not fused:
        vector = [c for c in vector if c.rank >= settings.min_similarity_alone]
    if not vector:
        return fused, primary
    state = gate(fused, primary, vector, settings.agree_top)
    weight = getattr(settings.weight, state)
    if weight <= 0:
        return fused, primary
    k = rules.fusion.rrf_k
    # Copies: the lexical entries may be shared with a caller.
    by_id = {e.candidate.chunk_id: Fused(e.candidate, e.score, list(e.lists)) for e in fused}
    for rank, candidate in enumerate(vector, start=1):
        entry = by_id.setdefault(candidate.chunk_id, Fused(candidate, 0.0))
        entry.score += weight / (k + rank)
        entry.lists.append(VECTOR_LAYER)
    entries = list(by_id.values())
    if state == STRONG and primary is not None:
        head, tail = entries[:primary], entries[primary:]
        return _sorted(head) + _sorted(tail), primary
    return _sorted(entries), None


def _sorted(entries: list[Fused]) -> list[Fused]:
    return sorted(entries, key=lambda entry: -entry.score)
