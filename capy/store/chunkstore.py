"""Writing and removing one source's chunks in both FTS tables, with its vocabulary counts.

The porter table takes a row per chunk, the trigram table a row per block of chunks
(capy.store.trigram_blocks).

Shared by indexing, re-indexing and cleanup; callers hold the write transaction. A writer moves
the source's chunk count (capy.store.counters) in that same transaction: `drop_chunks` does,
and one that adds chunks calls `add_chunk_count` with its rows, then hands the chunks to
`write_chunks`, which writes the vocabulary and, last, the FTS rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.store.content import ContentError
from capy.store.counters import add_chunk_count
from capy.store.migrations import CHUNK_ORDINAL_BITS, chunk_rowid, chunk_rowid_range
from capy.store.trigram_blocks import INSERT_BLOCK, trigram_blocks
from capy.store.vocabulary import apply_term_delta, term_counts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.chunking import Chunk
    from capy.rules.views.chunking import ChunkingPack

MAX_CHUNKS_PER_SOURCE = 1 << CHUNK_ORDINAL_BITS


def chunk_for_index(
    text: str, content_type: str, label: str, chunking: ChunkingPack
) -> list[Chunk]:
    """The chunker's output, never empty and never more chunks than rowids allow."""
    from capy.chunking import Chunk, chunk_text

    chunks = chunk_text(text, content_type=content_type, label=label, rules=chunking)
    if not chunks:
        # The chunker found nothing to cut (it should not happen for non-blank text); one chunk
        # keeps the invariant that every stored source is searchable.
        chunks = [Chunk(title=chunking.titles.clip(label), content=text)]
    if len(chunks) > MAX_CHUNKS_PER_SOURCE:
        raise ContentError(
            f"refusing to index {label!r}: it makes {len(chunks):,} chunks, more than the "
            f"{MAX_CHUNKS_PER_SOURCE:,} one source can hold; lower the size cap"
        )
    return chunks


def count_chunks(conn: sqlcipher3.Connection, source_id: int) -> int:
    first, last = chunk_rowid_range(source_id)
    return conn.execute(
        "SELECT count(*) FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last)
    ).fetchone()[0]


def drop_chunks(conn: sqlcipher3.Connection, source_id: int) -> Counter[str]:
    """Delete a source's chunks from both FTS tables; return their vocabulary counts."""
    first, last = chunk_rowid_range(source_id)
    rows = conn.execute(
        "SELECT title, content FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last)
    ).fetchall()
    conn.execute("DELETE FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last))
    conn.execute("DELETE FROM chunks_trigram WHERE rowid BETWEEN ? AND ?", (first, last))
    add_chunk_count(conn, source_id, -len(rows))
    return term_counts(text for row in rows for text in row)


def insert_chunk_rows(conn: sqlcipher3.Connection, source_id: int, chunks: Sequence[Chunk]) -> None:
    """Only the FTS rows; the caller moves the chunk count and the vocabulary.

    FTS5 writes the rows it holds in memory out as a segment at every savepoint and before any
    statement that may need to roll back alone (an upsert, an UPDATE with triggers) runs in the
    same transaction. A writer that puts these inserts after all its other statements gets one
    segment per commit instead of one per source."""
    rows = [
        (chunk_rowid(source_id, ordinal), chunk.title, chunk.content, source_id, ordinal)
        for ordinal, chunk in enumerate(chunks)
    ]
    for table in _FTS_INSERTS:
        insert_fts_rows(conn, table, rows)


# The trigram table is an index only (migration 0009) of blocks of chunks (0011,
# capy.store.trigram_blocks); `chunks` keeps the one copy of each chunk.
_FTS_INSERTS = {
    "chunks": "INSERT INTO chunks (rowid, title, content, source_id, ordinal) "
    "VALUES (?, ?, ?, ?, ?)",
    "chunks_trigram": INSERT_BLOCK,
}


def insert_fts_rows(
    conn: sqlcipher3.Connection, table: str, rows: Sequence[tuple[int, str, str, int, int]]
) -> None:
    """Rows of (rowid, title, content, source_id, ordinal), in rowid order, into one FTS table
    as it takes them: every chunk of a block of the trigram table must be in the same call."""
    if table == "chunks":
        conn.executemany(_FTS_INSERTS[table], rows)
    else:
        conn.executemany(_FTS_INSERTS[table], trigram_blocks(rows))


def chunk_terms(chunks: Sequence[Chunk]) -> Counter[str]:
    return term_counts(text for chunk in chunks for text in (chunk.title, chunk.content))


@dataclass(frozen=True)
class PendingChunks:
    """A written source row's chunks, still to go into the FTS tables, and its vocabulary."""

    source_id: int
    chunks: list[Chunk]
    added: Counter[str]
    removed: Counter[str]


def write_chunks(conn: sqlcipher3.Connection, pending: list[PendingChunks]) -> None:
    """The vocabulary of all of them in one pass, then their FTS rows, last (see
    `insert_chunk_rows`: nothing after them makes FTS5 write a segment before the commit)."""
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for item in pending:
        added.update(item.added)
        removed.update(item.removed)
    apply_term_delta(conn, added, removed)
    for item in pending:
        insert_chunk_rows(conn, item.source_id, item.chunks)


def set_index_version(conn: sqlcipher3.Connection, version: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('index_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (version,),
    )
