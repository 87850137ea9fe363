"""The values the retrieval core passes around, and the corpus interface it searches through.

The core knows nothing about SQLCipher: the store, the vault and memory each implement `Corpus`
(six small methods) and get the whole pipeline (sanitising, fusion, fuzzy correction, boosts,
diversity, snippets) without copying it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:  # a static contract only (nothing checks it at run time), and typing costs a warm search
    Protocol = object


@dataclass(frozen=True)
class SearchFilters:
    """Which sources a search looks in."""

    kinds: tuple[str, ...] | None = None  # None = the retention pack's default-search kinds
    source: str | None = None  # exact source label, or a label prefix ending in "*"
    # Sources in scope whatever their kind: the searching session's own ephemeral output, which
    # the session should find without asking for the kind (other sessions' stays left out).
    session_sources: tuple[int, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """One row a corpus returns for one ranked list, best first."""

    chunk_id: int
    source_id: int
    source_label: str
    kind: str
    title: str
    content: str
    rank: float  # the list's own score (bm25: lower is better); only the order matters here
    # The content type its source was indexed as (the chunking pack's detection), which picks
    # the search pack's ranking profile; "" when the corpus does not record one.
    content_type: str = ""

    @classmethod
    def from_row(cls, row: tuple) -> Candidate:
        """From (chunk id, source id, label, kind, title, content, rank[, content type]), the
        column order every corpus's ranked-list query selects."""
        chunk_id, source_id, label, kind, title, content, rank, *more = row
        content_type = str(more[0] or "") if more else ""
        return cls(chunk_id, source_id, label, kind, title or "", content or "", rank, content_type)


@dataclass
class WorkBudget:
    """The work one ranked list may do and the work it did, in the corpus's unit (the SQLite
    corpora count virtual-machine steps: the same for a query on a store on any machine, at
    any load). `limit` None: the work is counted, never cut."""

    limit: int | None = None
    spent: int = 0
    # A corpus holding more rows than this does not run the list (None: any size): a step limit
    # does not bound a query that walks long doclists between two steps.
    max_rows: int | None = None

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent > self.limit


@dataclass(frozen=True)
class SearchHit:
    """One ranked chunk a search found, with its snippet."""

    chunk_id: int
    source_id: int
    source_label: str
    kind: str
    title: str
    content: str  # the full chunk content
    snippet: str  # bounded smart snippet around the matches
    layer: str  # "porter" | "trigram" | "fuzzy" | "rrf" (found by both lists)
    score: float


@dataclass(frozen=True)
class SearchResult:
    """The hits of one query, and what was corrected or left out."""

    query: str
    hits: tuple[SearchHit, ...]
    corrected_query: str | None = None  # set when fuzzy correction changed the query
    note: str | None = None  # e.g. "2 ephemeral sources were not searched"
    excluded_kinds: tuple[str, ...] = ()  # the kinds the note speaks of


class Corpus(Protocol):
    """What the core needs from a searchable collection of chunks."""

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
        """Run an FTS5 query on the "porter" or "trigram" list; at most `limit` rows, best first.
        `fts_query` is always well-formed: the core builds it from quoted terms only. With a
        budget, the list adds the work it does to `budget.spent`, a list that passes
        `budget.limit` is stopped and returns nothing, and a corpus holding more than
        `budget.max_rows` rows returns nothing without running it.
        `any_of`, when given, holds the quoted phrases an OR query is made of (`fts_query` is
        them joined by OR), so that a corpus may rank it without scoring every match."""
        ...

    def vocabulary_candidates(
        self, min_length: int, max_length: int, limit: int | None = None
    ) -> Iterable[str]:
        """Indexed words (lowercase) with a length in the range, most frequent first; the
        first `limit` of them when given."""
        ...

    def known_words(self, words: Iterable[str]) -> set[str]:
        """Which of these lowercase words (3 to 40 letters or digits) occur in indexed text."""
        ...

    def inside_words(self, words: Iterable[str]) -> set[str]:
        """Which of these lowercase words may occur inside an indexed word (a corpus that cannot
        tell cheaply returns them all)."""
        ...

    def excluded_counts(self, filters: SearchFilters) -> dict[str, int]:
        """Kind -> number of sources the kind filter left out (label filter applied)."""
        ...

    def record_access(self, source_ids: Iterable[int]) -> None:
        """Note that these sources served results (retention reads access counts)."""
        ...
