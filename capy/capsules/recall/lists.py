"""The ranked lists recall fuses, each a list of capsule numbers, best first.

- lexical: the retrieval core (`capy.retrieval.search`) over the capsule chunks, with the search
  pack's query handling (stopwords, synonyms, word forms, AND then OR, porter and trigram);
- graph: capsules that mention the entities the query names, then one hop out;
- vector: the semantic layer's nearest capsules, when it is installed (a seam: nothing without);
- speaker: the lexical list within the kinds of the speaker a question names (the pack's
  `recall.speakers`), empty for other questions;
- context, answer, dated, followed: built from the best lexical hits: their session neighbours,
  the reply after each hit that asks, for a question asking when the hits that say when, and
  for a question asking what came of an event the capsules after the hits;
- plain: bare bm25 over the chunks' text, not fused: its first hits only anchor (the pack's
  `recall.anchors`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from capy.capsules.extraction import find_mentions
from capy.capsules.sqlite import recall as sql
from capy.retrieval import SearchFilters, SearchHit, search
from capy.retrieval.query import WORD_PART

if TYPE_CHECKING:
    import sqlcipher3

    from capy.rules.ruleset import RuleSet
    from capy.rules.views.capsules import CapsulesPack, Recall, RecallAnswers
    from capy.rules.views.search import SearchPack

VECTOR_PROVIDER = "capy.semantic.capsules"
PLAIN = "plain"
_NO_FILTERS = SearchFilters()


@dataclass(frozen=True)
class LexicalList:
    order: list[int]  # capsule numbers, best first
    hits: dict[int, SearchHit]  # each capsule's best chunk


def lexical_list(
    conn: sqlcipher3.Connection,
    query: str,
    scope: sql.RecallScope,
    search_pack: SearchPack,
    settings: Recall,
) -> LexicalList:
    """The retrieval core over the chunks in scope: its best chunk per capsule, best first."""
    chunk = settings.chunk_weights
    rules = _for_recall(search_pack, settings)
    corpus = _corpus(conn, scope, rules, (chunk.title, chunk.content))
    result = search(corpus, query, rules=rules, limit=settings.candidates)
    hits: dict[int, SearchHit] = {}
    for hit in result.hits:
        hits.setdefault(hit.source_id, hit)
    return LexicalList(list(hits), hits)


def plain_list(
    conn: sqlcipher3.Connection,
    query: str,
    scope: sql.RecallScope,
    search_pack: SearchPack,
    settings: Recall,
) -> list[int]:
    """The first capsules of plain bm25 over the chunks' text in scope (every word of the query
    OR-ed: no stopwords, synonyms, word forms or AND pass), each at its best chunk; empty unless
    the pack's `recall.anchors` names the list. The retrieval core's query handling serves most
    questions better, yet ranks some answers that bare bm25 ranks first below the capsules that
    repeat every word of the question (a question about the latest version of two packages:
    the web searches listing dozens of packages); the anchors keep bm25's first in sight."""
    anchors = settings.anchors
    words = list(dict.fromkeys(word.lower() for word in _PLAIN_WORD.findall(query)))
    if not words or anchors is None or PLAIN not in anchors.lists or anchors.top < 1:
        return []
    phrases = tuple(f'"{word}"' for word in words)
    # The lexical list's bounds; the text alone, as a chunk's title is its kind, tool and command.
    corpus = _corpus(conn, scope, _for_recall(search_pack, settings), (0.0, 1.0))
    # A few chunks more than capsules wanted: one capsule's chunks may rank side by side.
    rows = corpus.match(
        "porter", " OR ".join(phrases), anchors.top * 4, _NO_FILTERS, any_of=phrases
    )
    return list(dict.fromkeys(row.source_id for row in rows))[: anchors.top]


def _corpus(
    conn: sqlcipher3.Connection,
    scope: sql.RecallScope,
    rules: SearchPack,
    weights: tuple[float, float],
) -> sql.CapsuleCorpus:
    return sql.CapsuleCorpus(
        conn,
        scope,
        weights=weights,
        essential_rows=rules.bm25.essential_rows,
        window=rules.bm25.rank_window,
    )


_PLAIN_WORD = re.compile(r"[^\W_]+")


def speaker_kinds(query: str, settings: Recall, where: sql.RecallScope) -> tuple[str, ...]:
    """The capsule kinds holding the words of the speaker the query names ("what did I ask":
    prompts), within the kinds recall may return; none when it names no speaker."""
    named = [
        kind
        for rule in settings.speakers
        if rule.active and _compiled(rule.pattern).search(query)
        for kind in rule.kinds
    ]
    allowed = where.kinds
    return tuple(dict.fromkeys(k for k in named if allowed is None or k in allowed))


def speaker_list(
    conn: sqlcipher3.Connection,
    query: str,
    scope: sql.RecallScope,
    search_pack: SearchPack,
    settings: Recall,
) -> list[int]:
    """The lexical list within the kinds of the speaker the query names (empty when it names
    none): a user's short prompt ranks far below tool output sharing its words otherwise."""
    kinds = speaker_kinds(query, settings, scope)
    if not kinds or settings.weights.speaker <= 0:
        return []
    return lexical_list(conn, query, replace(scope, kinds=kinds), search_pack, settings).order


def without_speaker(query: str, settings: Recall) -> str:
    """The query less the words that name its speaker ("did the assistant explain", "did I
    report"): they say who spoke, not what was said, and no capsule's text holds them, so a
    question's coverage of a capsule is judged on the rest."""
    for rule in settings.speakers:
        if rule.active:
            query = _compiled(rule.pattern).sub(" ", query)
    return query


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _for_recall(pack: SearchPack, settings: Recall) -> SearchPack:
    """The search pack as recall's lexical list uses it: `candidates` results (a tool call's
    cap is for what an agent reads, while recall reads candidates to fuse), and the bounds of
    the capsules pack's `recall.lexical` in place of the search pack's."""
    if _recall_pack and _recall_pack[0] is pack and _recall_pack[1] is settings:
        return _recall_pack[2]
    limits, bm25, query = pack.limits, pack.bm25, pack.query
    if limits.max_results < settings.candidates:
        limits = limits.model_copy(update={"max_results": settings.candidates})
    own = settings.lexical
    if own is not None:
        bm25 = bm25.model_copy(update=_set(own, "rank_window", "essential_rows"))
        query = query.model_copy(update=_set(own, "trigram_when_porter_below"))
    made = pack.model_copy(update={"limits": limits, "bm25": bm25, "query": query})
    _recall_pack[:] = [pack, settings, made]
    return made


# The last search pack made for recall and the packs it came from: made once, not per query.
_recall_pack: list = []


def _set(section: object, *names: str) -> dict[str, object]:
    """The named fields of `section` that are set (None: keep the search pack's)."""
    return {name: getattr(section, name) for name in names if getattr(section, name) is not None}


def query_entities(
    conn: sqlcipher3.Connection, query: str, pack: CapsulesPack, search_pack: SearchPack
) -> list[int]:
    """Ids of the entities the query names: what the entity rules find in it, and entities
    whose name is one of its words (a command, a library, a file name typed bare)."""
    names = [mention.entity.name for mention in find_mentions(query, pack.entities)]
    stop = search_pack.stopwords.all
    names += [word for word in _words(query) if word.lower() not in stop]
    wanted = list(dict.fromkeys(name for name in names if name))
    assert pack.recall is not None
    found = sql.entities_named(conn, wanted, pack.recall.graph.max_entities)
    return [entity_id for entity_id, _ in found]


def _words(query: str) -> list[str]:
    """The query's tokens as typed (a path or a dotted name kept whole) and their word parts."""
    tokens = [token.strip(".,;:!?()[]{}'\"`") for token in query.split()]
    parts = [part for token in tokens for part in WORD_PART.findall(token)]
    return [token for token in (*tokens, *parts) if len(token) >= 2]


def graph_list(
    conn: sqlcipher3.Connection, entity_ids: Sequence[int], scope: sql.RecallScope, settings: Recall
) -> list[int]:
    """Capsules naming the query's entities (those naming more of them first), then capsules
    naming their heaviest neighbours. Entities too common to tell capsules apart are skipped."""
    graph = settings.graph
    counts = sql.mention_counts(conn, entity_ids)
    useful = [e for e in entity_ids if 0 < counts.get(e, 0) <= graph.max_entity_capsules]
    direct = [n for n, _ in sql.capsules_mentioning(conn, useful, scope, graph.max_capsules)]
    room = graph.max_capsules - len(direct)
    if room <= 0 or not useful:
        return direct
    hop = [other for other, _ in sql.neighbours(conn, useful, graph.hop_neighbours)]
    hop_counts = sql.mention_counts(conn, hop)
    hop = [e for e in hop if hop_counts.get(e, 0) <= graph.max_entity_capsules]
    seen = set(direct)
    further = [
        n for n, _ in sql.capsules_mentioning(conn, hop, scope, room + len(seen)) if n not in seen
    ]
    return direct + further[:room]


def context_lists(
    conn: sqlcipher3.Connection, ranked: Sequence[int], scope: sql.RecallScope, settings: Recall
) -> tuple[list[int], list[int]]:
    """The context list and the answer list, from one read of the best-ranked capsules'
    session neighbours.

    Context: the neighbours, by how much of the ranking sits near them; each gains
    1 / (rrf_k + rank) from every top capsule within reach. An answer often sits next to what
    names its subject (the reply after an error, the fix after a failed check), and a capsule
    amid several good hits lies inside the episode the question is about; listed top hit by
    top hit, the farthest neighbours of the first outranked the nearest of the second. Ties
    keep the order nearest first, earlier before later.

    Answer: a top capsule that asks something (the pack's `context.answers`) is answered by
    the capsule after it in its session: a question's words match the turn that asked, while
    the reply says what was asked for. That reply gains the rule's weight times a neighbour's
    share in the context list, and the answer list holds the replies in the asking capsules'
    order, fused on its own (`weights.answer`), so a reply ranks near its question where the
    context list alone left it below the word hits around it."""
    context = settings.context
    top = list(ranked[: context.from_top])
    around = sql.session_neighbours(conn, top, context.reach, scope)
    asking = _asking(conn, top, context.answers)
    near: dict[int, float] = {}
    answers: list[int] = []
    for rank, n in enumerate(top, start=1):
        neighbours = around.get(n, ())
        # The nearest later capsule of the session: another session's may come between.
        reply = next((other for other, offset in neighbours if offset > 0), None)
        if n in asking and reply is not None:
            answers.append(reply)
        for other, _ in neighbours:
            gain = 1.0 / (settings.rrf_k + rank)
            if other == reply and n in asking:
                gain *= context.answers.weight  # type: ignore[union-attr]
            near[other] = near.get(other, 0.0) + gain
    return sorted(near, key=lambda other: -near[other]), list(dict.fromkeys(answers))


def dated_list(
    conn: sqlcipher3.Connection, query: str, ranked: Sequence[int], settings: Recall
) -> list[int]:
    """For a question asking when (the pack's `dated.question`), the best-ranked capsules that
    say when something happened (`dated.moment`: "last Friday", "two weeks ago", a month), in
    their order; empty for other questions. A topic's words match every turn about it, while
    the one that dates it answers a "when"."""
    dated = settings.dated
    if dated is None or not (dated.question.active and dated.moment.active):
        return []
    if not _compiled(dated.question.pattern).search(query):
        return []
    top = list(ranked[: dated.from_top])
    moment = _compiled(dated.moment.pattern)
    texts = sql.contents(conn, top)
    return [n for n in top if moment.search(texts.get(n, ""))]


def followed_list(
    conn: sqlcipher3.Connection,
    query: str,
    ranked: Sequence[int],
    scope: sql.RecallScope,
    settings: Recall,
) -> list[int]:
    """For a question asking what came of an event (the pack's `followed.question`: "what did
    the agent do next", "what sorted that out"), the capsules after each of the best-ranked
    ones in their session, nearest first, in the hits' order; empty for other questions. The
    question's words name the event, while what followed it (the fix, the next step) shares
    few of them; the context list reaches both ways, so it ranks what came before an event as
    high as what came after."""
    followed = settings.followed
    if followed is None or not followed.question.active or settings.weights.followed <= 0:
        return []
    if not _compiled(followed.question.pattern).search(query):
        return []
    top = list(ranked[: followed.from_top])
    around = sql.session_neighbours(conn, top, followed.reach, scope)
    later = [other for n in top for other, offset in around.get(n, ()) if offset > 0]
    return list(dict.fromkeys(later))


def _asking(
    conn: sqlcipher3.Connection, numbers: Sequence[int], answers: RecallAnswers | None
) -> set[int]:
    """Which of the capsules `numbers` ask something (their text matches the rule)."""
    if answers is None or not answers.active or answers.weight == 1.0 or not numbers:
        return set()
    asks = _compiled(answers.pattern)
    return {n for n, text in sql.contents(conn, numbers).items() if asks.search(text)}


class VectorSearch(Protocol):
    """What the semantic layer provides for recall: capsule numbers nearest the query. It may
    also have `start(conn, query)`, called before the other lists, to begin the work that does
    not read the log (embedding the query) alongside them, and `alone(numbers)`: those of the
    last list it returned that are close enough to show when no word search matched."""

    def nearest(
        self, conn: sqlcipher3.Connection, query: str, scope: sql.RecallScope, limit: int
    ) -> list[int]: ...


# The last (rules, vector search) found: a recall per query looked for the model each time.
_found: list[tuple[RuleSet, VectorSearch | None]] = []


def find_vector_search(rules: RuleSet | None = None) -> VectorSearch | None:
    """The semantic layer's `capsule_vector_search()`, when it is installed and has a model;
    with `rules` (a store's), found once for them in this process."""
    if rules is not None and _found and _found[0][0] is rules:
        return _found[0][1]
    try:
        provider = importlib.import_module(VECTOR_PROVIDER)
    except ImportError:
        return None
    factory = getattr(provider, "capsule_vector_search", None)
    if factory is None:
        return None
    if rules is None:
        return factory()
    searcher = factory(rules)
    _found[:] = [(rules, searcher)]
    return searcher


def start_vector_list(
    conn: sqlcipher3.Connection, query: str, searcher: VectorSearch | None
) -> None:
    start = getattr(searcher, "start", None)
    if start is not None:
        start(conn, query)


def vector_list(
    conn: sqlcipher3.Connection,
    query: str,
    scope: sql.RecallScope,
    limit: int,
    searcher: VectorSearch | None,
) -> list[int]:
    return [] if searcher is None else list(searcher.nearest(conn, query, scope, limit))


def alone(searcher: VectorSearch | None, numbers: Sequence[int]) -> list[int]:
    """Those of the vector list's `numbers` close enough to the query to be shown when no word
    search matched it (all of them when the searcher sets no such floor)."""
    judge = getattr(searcher, "alone", None)
    return list(numbers) if judge is None else list(judge(numbers))
