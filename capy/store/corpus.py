"""The knowledge base as a search corpus: FTS5 queries over `chunks` / `chunks_trigram`.

A ranked list is ranked rowids first (bm25, with the kind and label filters applied inside the
statement through the source id every chunk rowid carries), then one read of title, content and
source for the few rows kept, so large chunks are never sorted and no query runs per candidate.
An OR list starts from its rarest phrases (`capy.store.disjunction`); the statements of one list
read one snapshot of the database.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice

from capy.retrieval import Candidate, SearchFilters, SearchResult, search
from capy.retrieval.model import WorkBudget
from capy.rules.views.retention import SourceKind
from capy.rules.views.search import Bm25
from capy.store import Store
from capy.store.budget import fetch_within
from capy.store.counters import total_chunks
from capy.store.database import read_snapshot
from capy.store.disjunction import ranked_top
from capy.store.migrations import CHUNK_ORDINAL_BITS
from capy.store.trigram_backlog import backlog
from capy.store.trigram_blocks import Statistics, top_chunks
from capy.store.vectors import has_vectors
from capy.store.vocabulary import known_words

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlcipher3

    from capy.rules import RuleSet

_TABLES = {"porter": "chunks", "trigram": "chunks_trigram"}
_KINDS = tuple(kind.value for kind in SourceKind)


@dataclass
class _VocabularyCache:
    """Vocabulary rows by length band, for the life of the process, per database file.

    Valid while the vocabulary's (row count, total frequency) fingerprint holds; that is
    re-read only when the connection that last checked it sees a commit (`data_version` or
    its own changes). The generation lives here, not on the short-lived StoreCorpus, and
    `record_access` advances it past its own update (which never touches the vocabulary), so
    a search does not re-scan the vocabulary because the previous search counted an access."""

    fingerprint: tuple[int, int] | None = None
    bands: dict[tuple[int, int, int | None], tuple[str, ...]] = field(default_factory=dict)
    ranked: tuple[str, ...] | None = None  # every word, most frequent first
    # Words by length as (place in `ranked`, word): a band merges a few of these lists.
    by_length: dict[int, list[tuple[int, str]]] | None = None
    joined: str | None = None  # every word, one per line, for substring tests at C speed
    connection: object = None  # the connection `generation` was read on
    generation: tuple[int, int] | None = None


_vocabulary_caches: dict[str, _VocabularyCache] = {}


class StoreCorpus:
    """Implements `capy.retrieval.Corpus` over a Store (sources, chunks, chunks_trigram,
    vocabulary)."""

    def __init__(
        self, store: Store, *, default_kinds: tuple[str, ...], bm25: Bm25 | None = None
    ) -> None:
        self.store = store
        self.default_kinds = tuple(default_kinds)
        if bm25 is None:
            from capy.rules import load_rules

            bm25 = load_rules().view("search").bm25
        self.weights = (bm25.title_weight, bm25.content_weight)
        self.window = bm25.rank_window
        self.essential_rows = bm25.essential_rows
        self.trigram_blocks = bm25.trigram_blocks
        # The access log's size past which a search folds it (None: never; a writer will).
        self.fold_bytes: int | None = None

    # --- ranked lists ---

    def match(
        self,
        layer: str,
        fts_query: str,
        limit: int,
        filters: SearchFilters,
        *,
        budget: WorkBudget | None = None,
        any_of: tuple[str, ...] = (),
    ) -> list[Candidate]:
        table = _TABLES.get(layer)
        scope = self._scope(filters)
        if table is None or scope is None or limit < 1 or not fts_query:
            return []
        if self._too_large_for(budget):
            return []
        with read_snapshot(self.store.conn):
            conn = self.store.conn

            def rank(most: int) -> list[tuple[int, float]] | None:
                return ranked_top(
                    conn,
                    table,
                    self.weights,
                    scope.condition(),
                    fts_query,
                    any_of,
                    most,
                    window=self.window,
                    essential_rows=self.essential_rows,
                    budget=budget,
                    database=str(self.store.path),
                )

            if table == "chunks_trigram":  # ranked blocks of chunks (migration 0011)
                most = max(self.trigram_blocks, limit)
                pending = backlog(conn, scope.allowed)
                top = top_chunks(
                    conn,
                    rank,
                    fts_query,
                    limit,
                    most_blocks=most,
                    # An OR pass prunes by its k-th score: asked for fewer, it scores less.
                    first_blocks=limit if len(any_of) > 1 else most,
                    weights=self.weights,
                    statistics=Statistics(
                        fetch=lambda sql, values: fetch_within(conn, sql, values, budget),
                        database=str(self.store.path),
                        counted=tuple(any_of) if len(any_of) > 1 else (),
                        unindexed_chunks=pending.chunks,
                    ),
                    pending=pending.blocks,
                )
            else:
                top = rank(limit)
            return self._read(top or [])

    def _too_large_for(self, budget: WorkBudget | None) -> bool:
        """Whether the store holds more chunks than the budget lets a list run on (the
        counters: one row a kind)."""
        if budget is None or budget.max_rows is None:
            return False
        return total_chunks(self.store.conn) > budget.max_rows

    def _read(self, top: list[tuple[int, float]]) -> list[Candidate]:
        """Title, content and source of the ranked rows, in their order (large chunks are
        read for the few rows kept, never sorted). A row gone since it was ranked is left out."""
        if not top:
            return []
        ids = [rowid for rowid, _ in top]
        # From `chunks` whichever list ranked them: the trigram table is an index only
        # (migration 0009), and its blocks are resolved to chunk rowids before this (0011).
        rows = self.store.conn.execute(
            f"""SELECT c.rowid, s.id, s.label, s.kind, c.title, c.content, s.content_type
                  FROM chunks AS c
                  JOIN sources AS s ON s.id = c.rowid >> {CHUNK_ORDINAL_BITS}
                 WHERE c.rowid IN ({_marks(ids)})""",
            ids,
        ).fetchall()
        by_id = {row[0]: row for row in rows}
        return [
            Candidate.from_row((*by_id[rowid][:6], score, by_id[rowid][6]))
            for rowid, score in top
            if rowid in by_id
        ]

    def _scope(self, filters: SearchFilters) -> _Scope | None:
        """The sources the filters allow (None: no source can match)."""
        kinds = self._kinds(filters)
        if not kinds:
            return None
        label_sql, label_params = _label_filter(filters.source)
        own_sql, own = _session_filter(filters)
        allowed = (
            f"(kind IN ({_marks(kinds)}){own_sql}){label_sql}",
            [*kinds, *own, *label_params],
        )
        if filters.source is not None:
            return _Scope(allowed, (f"NOT ({allowed[0]})", allowed[1]))
        # Kinds alone: the sources outside are those of the other kinds (one index seek each)
        # that are not the session's own.
        excluded = self._excluded_kinds(filters)
        if not excluded:
            return _Scope(allowed, None)
        outside = f"kind IN ({_marks(excluded)})" + (
            f" AND id NOT IN ({_marks(own)})" if own else ""
        )
        return _Scope(allowed, (outside, [*excluded, *own]))

    def _kinds(self, filters: SearchFilters) -> tuple[str, ...]:
        return self.default_kinds if filters.kinds is None else tuple(filters.kinds)

    def _excluded_kinds(self, filters: SearchFilters) -> list[str]:
        """The kinds left out (a closed set, so sources outside are found by kind)."""
        return [kind for kind in _KINDS if kind not in self._kinds(filters)]

    # --- the vector list (capy.retrieval.vectors) ---

    rules: RuleSet | None = None

    def nearest(self, query: str, limit: int, filters: SearchFilters) -> list[Candidate]:
        """Chunks nearest to `query` by their vectors (Candidate.rank: the cosine), best first;
        [] without vectors in the store, or without the semantic extra to embed the query."""
        scope = self._scope(filters)
        if scope is None or self.rules is None or not has_vectors(self.store.conn):
            return []
        from capy.semantic import SemanticError, extra_installed
        from capy.semantic.vector_search import nearest_in_store

        if not extra_installed():
            return []

        allowed, params = scope.allowed
        conn = self.store.conn

        def in_scope() -> list[int]:
            return [
                row[0] for row in conn.execute(f"SELECT id FROM sources WHERE {allowed}", params)
            ]

        try:
            everything = scope.covers_all(conn)
            found = nearest_in_store(
                self.store, self.rules, query, limit, None if everything else in_scope
            )
        except SemanticError:  # search goes on lexically; doctor and status say why
            return []
        return [replace(candidate, rank=-candidate.rank) for candidate in self._read(found)]

    # --- fuzzy correction ---

    def vocabulary_candidates(
        self, min_length: int, max_length: int, limit: int | None = None
    ) -> Iterable[str]:
        cache = self._vocabulary_cache()
        self._refresh(cache)
        band = (max(min_length, 1), max_length, limit)
        if band not in cache.bands:
            # Merging the per-length lists in frequency order stops after `limit` words: a new
            # typo length costs microseconds instead of a pass over the whole vocabulary.
            by_length = self._by_length(cache)
            lists = [by_length.get(length, ()) for length in range(band[0], max_length + 1)]
            merged = islice(heapq.merge(*lists), limit)
            cache.bands[band] = tuple(word for _, word in merged)
        return cache.bands[band]

    def _by_length(self, cache: _VocabularyCache) -> dict[int, list[tuple[int, str]]]:
        if cache.by_length is None:
            by_length: dict[int, list[tuple[int, str]]] = {}
            for place, word in enumerate(self._ranked(cache)):
                by_length.setdefault(len(word), []).append((place, word))
            cache.by_length = by_length
        return cache.by_length

    def known_words(self, words: Iterable[str]) -> set[str]:
        return known_words(self.store.conn, words)

    def inside_words(self, words: Iterable[str]) -> set[str]:
        words = set(words)
        if not words:
            return set()  # nothing to look for: the vocabulary stays unread
        cache = self._vocabulary_cache()
        self._refresh(cache)
        if cache.joined is None:
            cache.joined = "\n".join(self._ranked(cache))
        return {word for word in words if word in cache.joined}

    def _ranked(self, cache: _VocabularyCache) -> tuple[str, ...]:
        if cache.ranked is None:
            cache.ranked = self._ranked_vocabulary()
        return cache.ranked

    def _ranked_vocabulary(self) -> tuple[str, ...]:
        """Every word, most frequent first, read in one pass: a length-band query walks the
        length index and looks each row up (one random read per word, ~30 ms per 10k words
        measured), and every new typo length would pay it again."""
        rows = self.store.conn.execute("SELECT term, frequency FROM vocabulary").fetchall()
        rows.sort(key=lambda row: (-row[1], row[0]))
        return tuple(row[0] for row in rows)

    def _vocabulary_cache(self) -> _VocabularyCache:
        return _vocabulary_caches.setdefault(str(self.store.path), _VocabularyCache())

    def _generation(self) -> tuple[int, int]:
        conn = self.store.conn
        return conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes

    def _refresh(self, cache: _VocabularyCache) -> None:
        conn = self.store.conn
        generation = self._generation()
        if (
            cache.connection is conn
            and generation == cache.generation
            and cache.fingerprint is not None
        ):
            return
        cache.connection, cache.generation = conn, generation
        count, total = conn.execute(
            "SELECT count(*), coalesce(sum(frequency), 0) FROM vocabulary"
        ).fetchone()
        if cache.fingerprint != (count, total):
            cache.fingerprint = (count, total)
            cache.bands.clear()
            cache.ranked = None
            cache.by_length = None
            cache.joined = None

    # --- notes and retention ---

    def excluded_counts(self, filters: SearchFilters) -> dict[str, int]:
        excluded = self._excluded_kinds(filters)
        if not excluded:
            return {}
        label_sql, label_params = _label_filter(filters.source)
        own = filters.session_sources
        own_sql = f" AND id NOT IN ({_marks(own)})" if own else ""
        rows = self.store.conn.execute(
            f"SELECT kind, count(*) FROM sources WHERE kind IN ({_marks(excluded)}){label_sql}"
            f"{own_sql} GROUP BY kind ORDER BY kind",
            (*excluded, *label_params, *own),
        )
        return {kind: count for kind, count in rows}

    def record_access(self, source_ids: Iterable[int]) -> None:
        """Note the hits beside the database, not in it (capy.store.access_log): a search
        stays a read. Best effort: a search must not fail, or wait long, because of a writer."""
        from capy.store.access_log import record_hits

        record_hits(self.store.conn, self.store.path, source_ids, self.fold_bytes, self._wrote)

    def _wrote(self, write: Callable[[], None]) -> None:
        """Run `write`, which never touches the vocabulary, so that the next search does not
        re-scan the vocabulary because this one wrote."""
        cache = self._vocabulary_cache()
        current = cache.connection is self.store.conn and cache.generation == self._generation()
        write()
        if current:  # only this write happened since the check: the vocabulary is as seen
            cache.generation = self._generation()


@dataclass(frozen=True)
class _Scope:
    """SQL conditions on `sources` rows: those in scope, and those outside it (None: none can
    be), each with its parameters."""

    allowed: tuple[str, list[object]]
    outside: tuple[str, list[object]] | None

    def covers_all(self, conn: sqlcipher3.Connection) -> bool:
        """Whether every source is in scope (the usual case: then the vector list needs no
        list of allowed sources: read from 5,700 sources it cost half as much as the search)."""
        if self.outside is None:
            return True
        outside, params = self.outside
        sql = f"SELECT NOT EXISTS (SELECT 1 FROM sources WHERE {outside})"
        return bool(conn.execute(sql, params).fetchone()[0])

    def condition(self) -> tuple[str, list[object]]:
        """A condition on a matched chunk's rowid. The source test costs as much per matching
        row as bm25 itself; when no source is out of scope (the usual case) the uncorrelated
        NOT EXISTS, evaluated once, skips it."""
        if self.outside is None:
            return "1", []
        (allowed, allowed_params), (outside, outside_params) = self.allowed, self.outside
        sql = f"""(NOT EXISTS (SELECT 1 FROM sources WHERE {outside})
                   OR (rowid >> {CHUNK_ORDINAL_BITS})
                      IN (SELECT id FROM sources WHERE {allowed}))"""
        return sql, [*outside_params, *allowed_params]


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def _session_filter(filters: SearchFilters) -> tuple[str, list[object]]:
    """The session's own sources as an alternative to the kinds in scope ("" when none)."""
    own = list(filters.session_sources)
    return (f" OR id IN ({_marks(own)})", own) if own else ("", [])


def _label_filter(source: str | None) -> tuple[str, list[object]]:
    """Exact label, or a prefix when it ends in "*" (compared with substr, so `%`, `_` and
    glob characters in labels are literal)."""
    if source is None:
        return "", []
    if source.endswith("*"):
        prefix = source[:-1]
        if not prefix:
            return "", []
        return " AND substr(label, 1, ?) = ?", [len(prefix), prefix]
    return " AND label = ?", [source]


def search_store(
    store: Store,
    queries: Sequence[str],
    *,
    limit: int | None = None,
    kinds: Sequence[str] | None = None,
    source: str | None = None,
    rules: RuleSet | None = None,
    session_sources: Sequence[int] = (),
) -> list[SearchResult]:
    """Search the knowledge base once per query, with the packs in force (or `rules`);
    `session_sources` (source ids) are searched whatever their kind.

    Raises ValueError for a kind that does not exist (naming the ones that do).
    """
    if rules is None:
        from capy.rules import load_rules

        rules = load_rules(store.location.project_root)
    search_rules = rules.view("search")
    default_kinds = tuple(str(kind) for kind in rules.view("retention").kinds.default_search)
    if source:
        from capy.store.indexing import stored_label

        source, _ = stored_label(source, rules)  # labels are stored redacted
    filters = SearchFilters(
        kinds=_checked_kinds(kinds),
        source=source or None,
        session_sources=tuple(sorted(set(session_sources))),
    )
    corpus = StoreCorpus(store, default_kinds=default_kinds, bm25=search_rules.bm25)
    corpus.fold_bytes = rules.view("retention").cleanup.access_log_fold_bytes
    corpus.rules = rules  # the vector list reads the semantic pack
    return [
        search(corpus, query, rules=search_rules, limit=limit, filters=filters) for query in queries
    ]


def _checked_kinds(kinds: Sequence[str] | None) -> tuple[str, ...] | None:
    if kinds is None:
        return None
    unknown = sorted({kind for kind in kinds if kind not in _KINDS})
    if unknown:
        raise ValueError(
            f"unknown source kind {', '.join(map(repr, unknown))}; use {', '.join(_KINDS)}"
        )
    return tuple(dict.fromkeys(kinds)) or None
