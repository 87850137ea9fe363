"""The trigram table's rows: one per block of consecutive chunks, resolved to chunks on search.

Since migration 0011 `chunks_trigram` holds one row per block of `TRIGRAM_BLOCK_CHUNKS`
consecutive chunks of a source (their contents joined by newlines, their distinct titles
likewise), with the rowid of the block's first chunk. FTS5 pays per row and distinct term: a
chunk of a few hundred bytes holds most of its trigrams once, so a row per chunk wrote nearly
one doclist entry per trigram of text. Measured on the 6.1 MB of real files `capy bench peer`
indexes: the trigram inserts' CPU per chunk 2.4-2.6 s, per block of 16 chunks 1.5 s, per whole
source 1.4 s (4 chunks: 1.8 s). A block, not a whole source, so that finding the chunks of a
matched row reads at most 16 chunks.

The trigram list ranks blocks by bm25 as it ranked chunks, and each block then gives the chunks
in it that match the query themselves (every AND group has a phrase that is a substring of the
chunk's title or content, case folded as the trigram tokenizer folds it); a block whose terms
are spread over several chunks gives none, as no chunk row would have matched. The chunks of
the top blocks are then ranked together by bm25 computed per chunk (`_Scorer`), so the list
orders chunks as a row per chunk did: `capy bench quality` gives the same figures in every
table as with a row per chunk (an order by block first moved one case from rank 2 to 3).

Newlines join the chunks: no query phrase holds a newline (query text has control characters
turned into spaces), so a trigram across a join never matches a phrase that no chunk holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import sqlcipher3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.store.disjunction import Fetch

# 16 chunks a block: a power of two, so a block is an aligned run of chunk rowids and the rowid
# range delete of a source still removes its blocks. A schema constant, not a tuning knob:
# changing it needs a migration that rebuilds the table (as 0011 does from `chunks`).
TRIGRAM_BLOCK_BITS = 4
TRIGRAM_BLOCK_CHUNKS = 1 << TRIGRAM_BLOCK_BITS
_BLOCK_MASK = ~(TRIGRAM_BLOCK_CHUNKS - 1)
_JOIN = "\n"
TABLE = "chunks_trigram"
# FTS5's bm25 constants (fts5_aux.c).
_K1 = 1.2
_B = 0.75
INSERT_BLOCK = "INSERT INTO chunks_trigram (rowid, title, content) VALUES (?, ?, ?)"

# A quoted FTS5 string ("" inside is one quote) or the AND that separates groups.
_QUERY_TOKEN = re.compile(r'"((?:[^"]|"")*)"|\bAND\b')


def block_rowid(chunk_rowid: int) -> int:
    return chunk_rowid & _BLOCK_MASK


def trigram_blocks(rows: Iterable[Sequence]) -> Iterator[tuple[int, str, str]]:
    """(block rowid, titles, contents) of (rowid, title, content, ...) rows in rowid order; the
    rows of one block must all be given in one call."""
    for block, members in groupby(rows, key=lambda row: block_rowid(row[0])):
        rows_in = list(members)
        titles = dict.fromkeys(row[1] for row in rows_in if row[1])
        yield block, _JOIN.join(titles), _JOIN.join(row[2] for row in rows_in)


def rebuild_trigram_blocks(conn: sqlcipher3.Connection) -> None:
    """Fill the (empty) trigram table from every stored chunk, a block a row."""
    rows = conn.execute("SELECT rowid, title, content FROM chunks ORDER BY rowid")
    conn.executemany(INSERT_BLOCK, trigram_blocks(rows))


def phrase_groups(fts_query: str) -> list[tuple[str, ...]]:
    """The phrases of a trigram query as AND-ed groups of OR-ed phrases, case folded: the
    only shapes `capy.retrieval.query.trigram_query` builds (`"a" AND ("b" OR "c")`, or
    phrases OR-ed)."""
    groups: list[list[str]] = [[]]
    for match in _QUERY_TOKEN.finditer(fts_query):
        if match.group(1) is None:
            groups.append([])
        else:
            groups[-1].append(match.group(1).replace('""', '"').lower())
    return [tuple(group) for group in groups if group]


@dataclass(frozen=True)
class Statistics:
    """How the table's statistics are read: `fetch` within the pass's work budget, and whether
    the pass counted its phrases (an OR pass of several: see `_Scorer`)."""

    fetch: Fetch
    database: str
    counted: bool


def chunks_of_blocks(
    conn: sqlcipher3.Connection,
    blocks: Sequence[tuple[int, float]],
    fts_query: str,
    limit: int,
    *,
    weights: Sequence[float],
    statistics: Statistics,
) -> list[tuple[int, float]]:
    """The matching chunks of ranked (block rowid, bm25) pairs, as ranked (rowid, bm25): each
    chunk scored by FTS5's bm25 formula as a row of its own would be (`_Scorer`)."""
    groups = phrase_groups(fts_query)
    if not blocks or not groups:
        return []
    matched: list[tuple[int, str, str]] = []
    for block, _ in blocks:
        rows = conn.execute(
            "SELECT rowid, title, content FROM chunks WHERE rowid BETWEEN ? AND ?",
            (block, block + TRIGRAM_BLOCK_CHUNKS - 1),
        ).fetchall()
        for rowid, title, content in rows:
            title, content = (title or "").lower(), (content or "").lower()
            if all(any(p in title or p in content for p in group) for group in groups):
                matched.append((rowid, title, content))
    if not matched:
        return []
    scorer = _Scorer.of(conn, [p for group in groups for p in group], weights, statistics)
    scored = sorted((scorer.score(title, content), rowid) for rowid, title, content in matched)
    return [(rowid, score) for score, rowid in scored[:limit]]


class _Scorer:
    """bm25 of one chunk as FTS5 computes it for a row (fts5_aux.c): per phrase, idf times the
    column-weighted occurrences f, as f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)), with D
    the chunk's trigram count. The average length comes from the block table's token total over
    the chunks it holds, the idf from its row and phrase counts: what a chunk-level table would
    give, up to how phrases spread over blocks instead of chunks.

    Phrase counts are taken only where the OR pass takes them anyway (`counted`: it starts from
    its rarest phrases, capy.store.disjunction, and caches the counts): counting a common
    phrase walks its whole doclist, which on a large store costs more than the search. Elsewhere
    every phrase weighs the same: one phrase alone is ordered the same by any weight, and in an
    AND every chunk holds every group."""

    def __init__(self, idfs: dict[str, float], weights: Sequence[float], average: float) -> None:
        self.idfs, self.weights, self.average = idfs, weights, max(average, 1.0)

    @classmethod
    def of(
        cls,
        conn: sqlcipher3.Connection,
        phrases: Sequence[str],
        weights: Sequence[float],
        scope: Statistics,
    ) -> _Scorer:
        from capy.store.counters import total_chunks  # search only
        from capy.store.disjunction import idf, phrase_counts, table_totals

        even = dict.fromkeys(phrases, 1.0)
        totals = table_totals(TABLE, scope.fetch)
        if totals is None:  # out of work
            return cls(even, weights, 1.0)
        rows, tokens = totals
        average = tokens / max(total_chunks(conn), 1)
        if not scope.counted:
            return cls(even, weights, average)
        quoted = {phrase: '"' + phrase.replace('"', '""') + '"' for phrase in phrases}
        counts = phrase_counts(
            TABLE, list(quoted.values()), fetch=scope.fetch, database=scope.database
        )
        if counts is None:
            return cls(even, weights, average)
        return cls({p: idf(rows, counts[quoted[p]]) for p in phrases}, weights, average)

    def score(self, title: str, content: str) -> float:
        title_weight, content_weight = self.weights
        length = _trigrams(title) + _trigrams(content)
        norm = _K1 * (1 - _B + _B * length / self.average)
        total = 0.0
        for phrase, weight in self.idfs.items():
            f = title_weight * title.count(phrase) + content_weight * content.count(phrase)
            if f:
                total += weight * f * (_K1 + 1) / (f + norm)
        return -total  # FTS5's sign: lower is better


def _trigrams(text: str) -> int:
    return max(len(text) - 2, 0)
