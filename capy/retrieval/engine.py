"""The search pipeline, over any `Corpus`:

sanitise -> stopwords -> synonyms -> AND on the porter list, and on the trigram list when
porter came back short -> (nothing found, and a word is missing from the vocabulary)
fuzzy-correct it and AND again -> (fewer than `or_fallback_below` and than the candidates
wanted) OR, filling the slots after the AND results (long OR queries on the porter list only)
-> (still nothing) fuzzy OR -> fuse by RRF -> scale by (1 + boosts, definition boost
included), within each tier -> per-source diversity -> limit -> snippets.

Fuzzy correction runs before the OR fallback when a word is unknown to the vocabulary: such a
word can match nothing, so the AND pass failed because of it, and "circut breaker" should find
the circuit breaker rather than every chunk that mentions a breaker. A word with no neighbour
within its distance band is left alone, and OR only returns chunks holding some real query
term, so a query about something absent still returns nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from capy.clip import clip_line
from capy.retrieval.boosts import boost, find_matches, term_weights
from capy.retrieval.definitions import definition_boost, wanted_names
from capy.retrieval.diversity import diversify
from capy.retrieval.fusion import Fused, reciprocal_rank_fusion
from capy.retrieval.fuzzy import Corrector
from capy.retrieval.matching import compile_terms
from capy.retrieval.model import Corpus, SearchFilters, SearchHit, SearchResult, WorkBudget
from capy.retrieval.query import (
    ParsedQuery,
    Term,
    clean_text,
    parse_query,
    porter_phrases,
    porter_query,
    trigram_phrases,
)
from capy.retrieval.query import trigram_query as build_trigram_query
from capy.retrieval.snippets import make_snippet
from capy.retrieval.vectors import join_vector_list, nearest_of
from capy.rules.views.search import SearchPack

FUZZY_LAYER = "fuzzy"
_correctors: dict[int, Corrector] = {}  # one LRU per cache size, for the life of the process


@dataclass(frozen=True)
class _Retrieved:
    """The fused candidates of one query and the terms that found them."""

    fused: list[Fused]
    terms: tuple[Term, ...]
    corrected: bool = False
    # The first `primary` entries matched every term; the rest came from an OR pass and rank
    # after them whatever their boosts (None: all entries are one tier).
    primary: int | None = None


def search(
    corpus: Corpus,
    query: str,
    *,
    rules: SearchPack,
    limit: int | None = None,
    filters: SearchFilters = SearchFilters(),  # noqa: B008 (frozen, safe to share)
) -> SearchResult:
    """Search `corpus` for `query`; any query text is safe (it never reaches FTS5 unquoted)."""
    limit = rules.limits.clamp(limit)
    shown_query = query if isinstance(query, str) else clean_text(query, rules.query.max_bytes)
    parsed = parse_query(query, rules)
    if parsed.empty:
        return SearchResult(query=shown_query, hits=())  # nothing was searched, nothing to note
    retrieved = _retrieve(corpus, parsed, limit, filters, rules)
    # Boosts re-rank; finding every term in every chunk is the costly part of them, and a
    # candidate far down the fused list seldom climbs into the results.
    fused = retrieved.fused[: limit * rules.fusion.rerank_per_result]
    hits = _rank(replace(retrieved, fused=fused), limit, rules)
    if nearest_of(corpus) is not None:  # the semantic layer's list, gated by the pack
        and_found = len(retrieved.fused) if retrieved.primary is None else retrieved.primary
        hits = join_vector_list(
            corpus, shown_query, hits, and_found, retrieved.terms, limit, filters, rules
        )
    if hits:
        corpus.record_access({hit.source_id for hit in hits})
    corrected = parsed.with_terms(retrieved.terms).shown if retrieved.corrected else None
    note, excluded = _note(corpus, filters, len(hits), limit)
    return SearchResult(
        query=shown_query,
        hits=tuple(hits),
        corrected_query=corrected,
        note=note,
        excluded_kinds=excluded,
    )


def _retrieve(
    corpus: Corpus, parsed: ParsedQuery, limit: int, filters: SearchFilters, rules: SearchPack
) -> _Retrieved:
    """AND first; a query whose AND pass finds nothing is fuzzy-corrected and ANDed again; when
    AND finds fewer than `or_fallback_below`, OR fills the remaining slots, ranked after."""
    terms, settings = parsed.terms, rules.query
    wanted = rules.fusion.candidates_for(limit)
    found = _run(corpus, terms, "AND", wanted, filters, rules, shown=limit)
    # OR results rank after every AND result, so once AND fills every candidate slot an OR
    # pass could add nothing that is shown.
    if len(found) >= min(settings.or_fallback_below, wanted):
        return _Retrieved(found, terms)
    active, was_corrected = terms, False
    corrected = _corrected(corpus, terms, rules) if not found else terms
    if corrected != terms:
        retry = _run(corpus, corrected, "AND", wanted, filters, rules)
        if retry:
            found, active, was_corrected = retry, corrected, True
    primary = None
    if settings.and_then_or and len(active) > 1:
        # 0 when AND found nothing: one tier, as None, but the vector gate can tell it apart.
        primary = len(found)
        # Once AND filled every slot the caller will see, OR only adds spare candidates.
        spare = len(found) >= limit
        if not (spare and settings.skip_optional_when_shown and _fills_shown(found, limit, rules)):
            found = _merge(
                found, _run(corpus, active, "OR", wanted, filters, rules, found_already=spare)
            )
    if len(found) < rules.fuzzy.trigger_below_results and corrected != terms:
        retry = _run(
            corpus, corrected, "OR" if settings.and_then_or else "AND", wanted, filters, rules
        )
        if retry:
            tier = 0 if settings.and_then_or else None  # an OR retry holds no AND result
            return _Retrieved(retry, corrected, corrected=True, primary=tier)
    return _Retrieved(found, active, corrected=was_corrected, primary=primary)


def _corrected(corpus: Corpus, terms: tuple[Term, ...], rules: SearchPack) -> tuple[Term, ...]:
    if not rules.fuzzy.enabled:
        return terms
    corrector = _correctors.setdefault(rules.fuzzy.cache_size, Corrector(rules.fuzzy.cache_size))
    corrected = corrector.correct(corpus, terms, rules.fuzzy)
    # A corrected word brings its own synonym group ("authentcation" -> "authentication" -> login).
    return tuple(
        replace(term, synonyms=_union(term.synonyms, *map(rules.synonyms.expand, term.corrections)))
        for term in corrected
    )


def _union(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(word for group in groups for word in group))


def _run(
    corpus: Corpus,
    terms: tuple[Term, ...],
    conjunction: str,
    wanted: int,
    filters: SearchFilters,
    rules: SearchPack,
    *,
    found_already: bool = False,
    shown: int | None = None,
) -> list[Fused]:
    """One pass: the porter list, then the trigram list when porter came back short.

    A list that can only add to what is already shown runs within the pack's work budget (its
    steps, and only on a store of at most its chunks) and adds nothing when cut short: the
    porter list of an OR pass after AND filled every slot the caller sees (`found_already`),
    and the trigram list when every query word is a known word.
    A list that is the only way to an answer (a word that occurs only inside longer words) is
    never cut, and a trigram AND with a word that occurs nowhere, even inside a word, is not run.
    With the pack's `skip_optional_when_shown`, an optional trigram list is not run once porter
    found as many chunks as the caller is `shown`.
    """
    budget, largest = rules.query.optional_pass_budget_steps, rules.query.optional_pass_max_chunks
    lists = {}
    # The porter list's work is counted even when it is not cut: the trigram list is judged by it.
    porter_work = WorkBudget(budget, max_rows=largest) if found_already else WorkBudget()
    porter = porter_query(terms, conjunction=conjunction)
    if porter:
        lists["porter"] = corpus.match(
            "porter",
            porter,
            wanted,
            filters,
            budget=porter_work,
            any_of=porter_phrases(terms) if conjunction == "OR" else (),
        )
    trigram, min_chars = None, rules.query.trigram_min_chars
    # Porter found enough: substring hits are not worth their cost (see the pack).
    porter_short = len(lists.get("porter", ())) < min(rules.query.trigram_when_porter_below, wanted)
    if porter_short and (conjunction == "AND" or len(terms) <= rules.query.or_trigram_max_terms):
        trigram = build_trigram_query(terms, conjunction=conjunction, min_chars=min_chars)
    if trigram:
        reach = _substring_reach(corpus, terms, conjunction, rules)
        optional = reach is _Reach.KNOWN_WORDS
        # The trigram list of the same words costs more than the porter list (every trigram
        # of a word has at least the word's postings, and there are several per word): when
        # the porter list alone used the budget, an optional trigram pass would be cut short
        # and add nothing, so it is not started.
        spent = budget is not None and porter_work.spent >= budget
        filled = (
            shown is not None
            and rules.query.skip_optional_when_shown
            and len(lists.get("porter", ())) >= shown
        )
        if reach is not _Reach.NONE and not (optional and (spent or filled)):
            lists["trigram"] = corpus.match(
                "trigram",
                trigram,
                wanted,
                filters,
                budget=WorkBudget(budget, max_rows=largest) if optional else None,
                any_of=trigram_phrases(terms, min_chars=min_chars) if conjunction == "OR" else (),
            )
    return reciprocal_rank_fusion(lists, rules.fusion.rrf_k)


class _Reach(Enum):
    """What the trigram list can find that porter cannot, judged from the vocabulary."""

    KNOWN_WORDS = "known words"  # every word occurs as a word: substrings add little
    INSIDE_WORDS = "inside words"  # a word occurs only inside longer ones: the way to it
    NONE = "none"  # AND with a word found nowhere: it cannot match


# Worst to best reach of one term.
_ORDER = (_Reach.NONE, _Reach.INSIDE_WORDS, _Reach.KNOWN_WORDS)


def _substring_reach(
    corpus: Corpus, terms: tuple[Term, ...], conjunction: str, rules: SearchPack
) -> _Reach:
    """A query word that never occurs as a word of its own can only match inside longer ones
    ("Config" in RetryConfig, a partial word): then the trigram list is the way to it. When
    every word is known, substring hits ("form" in "information") add little and cost the
    most of any step on a large store. One key lookup per word, and for an unknown word one
    substring test over the cached vocabulary (a typo that occurs nowhere cannot match). A
    term reaches as far as its best variant (a typo's correction is a known word)."""
    min_chars = rules.query.trigram_min_chars
    variants = [
        [term.variant_words(v, min_chars) for v in term.trigram_variants(min_chars)]
        for term in terms
    ]
    words = {word for term in variants for variant in term for word in variant}
    known = corpus.known_words(words)
    inside = corpus.inside_words(words - known)
    reaches = [
        max((_variant_reach(v, known, inside) for v in term), default=_Reach.NONE, key=_ORDER.index)
        for term in variants
    ]
    if conjunction == "AND" and _Reach.NONE in reaches:
        return _Reach.NONE
    # A word reachable only inside longer words makes the list necessary, whatever the others.
    for reach in (_Reach.INSIDE_WORDS, _Reach.KNOWN_WORDS):
        if reach in reaches:
            return reach
    return _Reach.NONE


def _variant_reach(words: tuple[str, ...], known: set[str], inside: set[str]) -> _Reach:
    if all(word in known for word in words):
        return _Reach.KNOWN_WORDS
    if all(word in known or word in inside for word in words):
        return _Reach.INSIDE_WORDS
    return _Reach.NONE


def _fills_shown(found: list[Fused], limit: int, rules: SearchPack) -> bool:
    """Whether these AND results alone fill the `limit` results shown: of those that survive
    the re-rank cut, at most the per-source cap of each source gets a slot before OR results
    would (`diversify`), so a source with many AND hits leaves room an OR hit could take."""
    cap = rules.diversity.max_per_source
    kept = found[: limit * rules.fusion.rerank_per_result]
    if cap < 1:
        return len(kept) >= limit
    per_source: dict[int, int] = {}
    for entry in kept:
        source = entry.candidate.source_id
        per_source[source] = per_source.get(source, 0) + 1
    return sum(min(count, cap) for count in per_source.values()) >= limit


def _merge(first: list[Fused], second: list[Fused]) -> list[Fused]:
    """AND results (fewer than wanted) stay ahead of the OR results that repeat them."""
    seen = {entry.candidate.chunk_id for entry in first}
    return first + [entry for entry in second if entry.candidate.chunk_id not in seen]


def _rank(retrieved: _Retrieved, limit: int, rules: SearchPack) -> list[SearchHit]:
    patterns = compile_terms(retrieved.terms)
    found = [
        find_matches(entry.candidate.title, entry.candidate.content, patterns)
        for entry in retrieved.fused
    ]
    weights = term_weights(found)
    wanted = wanted_names(retrieved.terms, rules.entities)
    scored = []
    for entry, matches in zip(retrieved.fused, found, strict=True):
        candidate = entry.candidate
        # Each content type ranks by its profile's weights (the search pack's `profiles`).
        boosts = rules.boosts_for(candidate.content_type)
        extra = boost(
            candidate.title,
            candidate.content,
            patterns,
            matches,
            weights,
            boosts,
            rules.entities,
        ) + definition_boost(candidate.content, wanted, boosts.definition)
        scored.append((entry.score * (1.0 + extra), entry, matches))
    primary = retrieved.primary if retrieved.primary is not None else len(scored)
    scored = sorted(scored[:primary], key=_by_score) + sorted(scored[primary:], key=_by_score)
    ordered = diversify(
        scored, lambda item: item[1].candidate.source_id, rules.diversity.max_per_source
    )
    hits = []
    for score, entry, matches in ordered[:limit]:
        candidate = entry.candidate
        hits.append(
            SearchHit(
                chunk_id=candidate.chunk_id,
                source_id=candidate.source_id,
                source_label=candidate.source_label,
                kind=candidate.kind,
                title=clip_line(
                    candidate.title, rules.snippets.title_chars, rules.snippets.ellipsis
                ),
                content=candidate.content,
                snippet=make_snippet(candidate.content, matches.content, rules.snippets),
                layer=FUZZY_LAYER if retrieved.corrected else entry.layer,
                score=round(score, 6),
            )
        )
    return hits


def _by_score(item: tuple[float, Fused, object]) -> float:
    return -item[0]


def _note(
    corpus: Corpus, filters: SearchFilters, found: int, limit: int
) -> tuple[str | None, tuple[str, ...]]:
    """Say which kinds were left out, when results are short and some were.

    How to include them differs by surface (`--kind` on the CLI, `include_kinds` for a tool),
    so the note only says what was left out and the kinds travel with it.
    """
    if found >= limit:
        return None, ()
    excluded = {kind: n for kind, n in corpus.excluded_counts(filters).items() if n > 0}
    if not excluded:
        return None, ()
    parts = [f"{n} {kind} source{'s' if n != 1 else ''}" for kind, n in sorted(excluded.items())]
    verb = "was" if sum(excluded.values()) == 1 else "were"
    return f"{' and '.join(parts)} {verb} not searched", tuple(sorted(excluded))
