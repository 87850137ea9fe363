"""One recall, end to end: the lists, their fusion, recency, the floor, folding, and the items."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.capsules.recall import RecallItem, _item
from capy.capsules.recall import lists as ranked_lists
from capy.capsules.recall.ranking import (
    Ranked,
    agreed_first,
    anchored,
    below_floor,
    coverages,
    fold_duplicates,
    fuse,
    matched,
    with_recency,
)
from capy.capsules.sqlite import recall as sql
from capy.retrieval.matching import compile_terms
from capy.retrieval.query import parse_query

if TYPE_CHECKING:
    from capy.capsules import Capsule, CapsuleStore
    from capy.capsules.recall.lists import VectorSearch
    from capy.rules.views.capsules import Recall

LEXICAL, GRAPH, VECTOR, CONTEXT, SPEAKER = "lexical", "graph", "vector", "context", "speaker"
ANSWER, DATED, FOLLOWED, PLAIN = "answer", "dated", "followed", "plain"
FUSED = (LEXICAL, GRAPH, CONTEXT, VECTOR, SPEAKER, ANSWER, DATED, FOLLOWED)
BUILT = (CONTEXT, ANSWER, DATED, FOLLOWED)  # lists built from the lexical hits the floor keeps
WORDS = (LEXICAL, SPEAKER)  # the word searches, whose hits the floor judges by their coverage


def ranked_items(
    store: CapsuleStore,
    query: str,
    where: sql.RecallScope,
    settings: Recall,
    *,
    vectors: VectorSearch | None,
    budget: int,
) -> tuple[list[RecallItem], tuple[str, str] | None]:
    """The relevant capsules for `query`, best first, and the session summary a small budget
    opens with (None when the budget is large or the session has none)."""
    conn = store.conn
    pack = store.rules.view("capsules")
    search_pack = store.rules.view("search")
    searcher = vectors or ranked_lists.find_vector_search(store.rules)
    ranked_lists.start_vector_list(conn, query, searcher)  # the model runs beside the SQL
    lexical = ranked_lists.lexical_list(conn, query, where, search_pack, settings)
    entity_ids = ranked_lists.query_entities(conn, query, pack, search_pack)
    listed = {
        LEXICAL: lexical.order,
        GRAPH: ranked_lists.graph_list(conn, entity_ids, where, settings),
        VECTOR: ranked_lists.vector_list(conn, query, where, settings.candidates, searcher),
        SPEAKER: ranked_lists.speaker_list(conn, query, where, search_pack, settings),
    }
    plain = ranked_lists.plain_list(conn, query, where, search_pack, settings)
    # The floor reads the whole capsule: a capsule's best chunk may hold only some of its words.
    spoken = ranked_lists.without_speaker(query, settings)
    patterns = compile_terms(parse_query(spoken, search_pack).terms)
    decay = store.rules.view("retention").scoring.decay_per_day
    # The word-search hits the floor drops take what was found only through them along: the
    # context list is built from the hits that stay, and when none reaches the floor (the
    # query matched nothing) from none. A dropped hit stays out of every list (the graph list
    # would bring back, unjudged, a capsule its words were judged on). Each pass drops hits;
    # the next fuses the lists without them.
    dropped: set[int] = set()
    while True:
        kept = {name: [n for n in order if n not in dropped] for name, order in listed.items()}
        context, answers = ranked_lists.context_lists(conn, kept[LEXICAL], where, settings)
        built = {
            CONTEXT: context,
            ANSWER: answers,
            DATED: ranked_lists.dated_list(conn, query, kept[LEXICAL], settings),
            FOLLOWED: ranked_lists.followed_list(conn, query, kept[LEXICAL], where, settings),
        }
        # The lists in a fixed order: fusion breaks ties by it.
        lists = {name: built[name] if name in BUILT else kept[name] for name in FUSED}
        fused, capsules = _candidates(store, lists, settings, decay)
        shares = coverages([capsules[entry.n].content for entry in fused], patterns)
        found = [bool(set(WORDS) & set(entry.lists)) for entry in fused]
        relevant = below_floor(
            fused, shares, found, settings.relevance_floor, settings.floor_power, WORDS
        )
        stay = {entry.n for entry in relevant}
        gone = {entry.n for entry, hit in zip(fused, found, strict=True) if hit} - stay
        if not matched(shares, found, settings.relevance_floor):
            # Nothing the words found is relevant: the brief holds only what other lists
            # found, so a vector hit must be close enough to stand alone.
            gone |= {n for name in WORDS for n in listed[name]}
            gone |= set(listed[VECTOR]) - set(ranked_lists.alone(searcher, listed[VECTOR]))
        if not gone - dropped:
            break
        dropped |= gone
    texts = {n: _text(capsules[n], lexical.hits.get(n)) for n in capsules}
    floor = settings.relevance_floor
    covered = {entry.n for entry, share in zip(fused, shares, strict=True) if share >= floor}
    dup = settings.duplicates
    order, folded = fold_duplicates(
        _anchored(_first(relevant, settings), {**kept, PLAIN: plain}, covered, settings),
        texts,
        dup.shingle_words,
        dup.min_similarity,
    )
    scores = {entry.n: entry for entry in relevant}
    items = [
        _with_folded(
            _item(capsules[n], scores[n].score, tuple(scores[n].lists), texts[n]),
            [capsules[m].id for m in folded[n]],
        )
        for n in order
    ]
    summary = None
    if items and budget < settings.summaries_first_below_tokens:
        summary = _summary(conn, capsules[order[0]])
    return items, summary


def _first(relevant: list[Ranked], settings: Recall) -> list[int]:
    """The relevant capsules' numbers, best first, the first without the vector list kept first
    where the vector list holds it too (the pack's `recall.vectors.keep_agreed_first`)."""
    vectors = settings.vectors
    if vectors is None or vectors.keep_agreed_first is None:
        return [entry.n for entry in relevant]
    return agreed_first(relevant, VECTOR, agreed=vectors.keep_agreed_first)


def _anchored(
    order: list[int], lists: dict[str, list[int]], covered: set[int], settings: Recall
) -> list[int]:
    """`order` with the first hits of the pack's anchor lists among its first places (the
    pack's `recall.anchors`): the lists fused beside them, each found from something the word
    lists matched, outnumber them and pushed their best hits out of the first five."""
    anchors = settings.anchors
    if anchors is None:
        return order
    # Interleaved by rank: each list's first hit comes before any list's second.
    firsts = [
        n
        for rank in range(anchors.top)
        for name in anchors.lists
        for n in lists.get(name, [])[rank : rank + 1]
        if n in covered  # a hit on the question's common words alone anchors nothing
    ]
    return anchored(order, firsts, anchors.within)


def _candidates(store: CapsuleStore, lists: dict[str, list[int]], settings: Recall, decay: float):  # type: ignore[no-untyped-def]
    """The fused lists' best candidates that are still in the log, scaled by recency, and
    their capsules."""
    # Only the best `candidates` fused capsules are read further: a brief shows a dozen, and
    # reading, covering and folding the long tail of the graph and context lists cost more
    # than the lists themselves (dev R@5 is the same with the tail or without it).
    fused = ranked_lists_fused(lists, settings)[: settings.candidates]
    capsules = store.backend.by_number(entry.n for entry in fused)
    fused = [entry for entry in fused if entry.n in capsules and not capsules[entry.n].forgotten]
    created = {n: capsule.created_at for n, capsule in capsules.items()}
    return with_recency(fused, created, settings.recency_weight, decay), capsules


def ranked_lists_fused(lists: dict[str, list[int]], settings: Recall):  # type: ignore[no-untyped-def]
    weights = {
        LEXICAL: settings.weights.lexical,
        GRAPH: settings.weights.graph,
        VECTOR: settings.weights.vector,
        CONTEXT: settings.weights.context,
        SPEAKER: settings.weights.speaker,
        ANSWER: settings.weights.answer,
        DATED: settings.weights.dated,
        FOLLOWED: settings.weights.followed,
    }
    return fuse(lists, weights, settings.rrf_k)


def _text(capsule: Capsule, hit) -> str:  # type: ignore[no-untyped-def]
    """What an item shows: the matching chunk's snippet, or the start of the capsule."""
    if hit is not None and hit.snippet.strip():
        return hit.snippet
    return capsule.content


def _with_folded(item: RecallItem, folded: list[str]) -> RecallItem:
    if not folded:
        return item
    from dataclasses import replace

    return replace(item, folded=tuple(folded))


def _summary(conn, capsule: Capsule) -> tuple[str, str] | None:  # type: ignore[no-untyped-def]
    session = capsule.metadata.get("session_id")
    if not isinstance(session, str) or not session:
        return None
    text = sql.session_summary(conn, capsule.scope, session, capsule.seq)
    return None if text is None else (session, text)
