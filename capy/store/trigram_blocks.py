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
are spread over several chunks gives none, as no chunk row would have matched. Blocks give
their best chunk first, in block order, then their second ones, and so on: the same best
candidate per block that a chunk-level list would rank near the block's place.

Newlines join the chunks: no query phrase holds a newline (query text has control characters
turned into spaces), so a trigram across a join never matches a phrase that no chunk holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby, zip_longest

import sqlcipher3

# 16 chunks a block: a power of two, so a block is an aligned run of chunk rowids and the rowid
# range delete of a source still removes its blocks. A schema constant, not a tuning knob:
# changing it needs a migration that rebuilds the table (as 0011 does from `chunks`).
TRIGRAM_BLOCK_BITS = 4
TRIGRAM_BLOCK_CHUNKS = 1 << TRIGRAM_BLOCK_BITS
_BLOCK_MASK = ~(TRIGRAM_BLOCK_CHUNKS - 1)
_JOIN = "\n"
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


def chunks_of_blocks(
    conn: sqlcipher3.Connection, blocks: Sequence[tuple[int, float]], fts_query: str, limit: int
) -> list[tuple[int, float]]:
    """The matching chunks of ranked (block rowid, bm25) pairs, as ranked (rowid, bm25)."""
    groups = phrase_groups(fts_query)
    if not blocks or not groups:
        return []
    per_block = []
    for block, score in blocks:
        rows = conn.execute(
            "SELECT rowid, title, content FROM chunks WHERE rowid BETWEEN ? AND ?",
            (block, block + TRIGRAM_BLOCK_CHUNKS - 1),
        ).fetchall()
        matched = []
        for rowid, title, content in rows:
            found, occurrences = _strength(groups, (title or "").lower(), (content or "").lower())
            if found:  # most phrases found, then most occurrences, then the earlier chunk
                matched.append((-found, -occurrences, rowid))
        per_block.append([(rowid, score) for *_, rowid in sorted(matched)])
    found = [pair for rank in zip_longest(*per_block) for pair in rank if pair is not None]
    return found[:limit]


def _strength(groups: Sequence[tuple[str, ...]], title: str, content: str) -> tuple[int, int]:
    """(phrases found, occurrences) when every group has a phrase in the chunk, else (0, 0)."""
    found = occurrences = 0
    for group in groups:
        hits = [title.count(phrase) + content.count(phrase) for phrase in group]
        if not any(hits):
            return 0, 0
        found += sum(1 for hit in hits if hit)
        occurrences += sum(hits)
    return found, occurrences
