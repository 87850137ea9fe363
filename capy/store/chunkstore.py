"""Writing and removing one source's chunks in both FTS tables, with its vocabulary counts.

The porter table takes a row per chunk, the trigram table a row per block of chunks
(capy.store.trigram_blocks).

Shared by indexing, re-indexing and cleanup; callers hold the write transaction. A writer moves
the source's chunk count (capy.store.counters) in that same transaction: `drop_chunks` does,
and one that adds chunks calls `add_chunk_count` with its rows, then hands the chunks to
`write_chunks`, which writes the vocabulary and, last, the FTS rows.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.store.content import ContentError
from capy.store.counters import add_chunk_count
from capy.store.migrations import CHUNK_ORDINAL_BITS, chunk_rowid, chunk_rowid_range
from capy.store.trigram_backlog import defer, forget
from capy.store.trigram_blocks import INSERT_BLOCK, trigram_blocks
from capy.store.vocabulary import TermDelta, term_counts

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
    forget(conn, source_id)  # blocks still to write for these chunks (trigram_backlog)
    add_chunk_count(conn, source_id, -len(rows))
    return term_counts(text for row in rows for text in row)


def insert_chunk_rows(
    conn: sqlcipher3.Connection,
    source_id: int,
    chunks: Sequence[Chunk],
    *,
    tables: Sequence[str] | None = None,
) -> None:
    """Only the FTS rows (of `tables`, both when None); the caller moves the chunk count and
    the vocabulary.

    FTS5 writes the rows it holds in memory out as a segment at every savepoint and before any
    statement that may need to roll back alone (an upsert, an UPDATE with triggers) runs in the
    same transaction. A writer that puts these inserts after all its other statements gets one
    segment per commit instead of one per source."""
    rows = fts_rows(source_id, chunks)
    for table in tables or _FTS_INSERTS:
        insert_fts_rows(conn, table, rows)


def fts_rows(source_id: int, chunks: Sequence[Chunk]) -> list[tuple[int, str, str, int, int]]:
    return [
        (chunk_rowid(source_id, ordinal), chunk.title, chunk.content, source_id, ordinal)
        for ordinal, chunk in enumerate(chunks)
    ]


# The trigram table is an index only (migration 0009) of blocks of chunks (0011,
# capy.store.trigram_blocks); `chunks` keeps the one copy of each chunk.
_FTS_INSERTS = {
    "chunks": "INSERT INTO chunks (rowid, title, content, source_id, ordinal) "
    "VALUES (?, ?, ?, ?, ?)",
    "chunks_trigram": INSERT_BLOCK,
}
# The same inserts as one statement each over a JSON array of rows (`EncodedChunks`).
_FTS_INSERTS_JSON = {
    "chunks": "INSERT INTO chunks (rowid, title, content, source_id, ordinal) "
    "SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)",
    "chunks_trigram": "INSERT INTO chunks_trigram (rowid, title, content) "
    "SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)",
}


def insert_fts_rows(
    conn: sqlcipher3.Connection, table: str, rows: Sequence[tuple[int, str, str, int, int]]
) -> None:
    """Rows of (rowid, title, content, source_id, ordinal), in rowid order, into one FTS table
    as it takes them: every chunk of a block of the trigram table must be in the same call."""
    conn.executemany(_FTS_INSERTS[table], _table_rows(table, rows))


def _table_rows(table: str, rows: Sequence[tuple[int, str, str, int, int]]) -> Iterable[tuple]:
    return rows if table == "chunks" else trigram_blocks(rows)


def chunk_terms(chunks: Sequence[Chunk]) -> Counter[str]:
    return term_counts(text for chunk in chunks for text in (chunk.title, chunk.content))


@dataclass(frozen=True)
class PendingChunks:
    """A written source row's chunks, still to go into the FTS tables, and its vocabulary."""

    source_id: int
    chunks: list[Chunk]
    added: Counter[str]
    removed: Counter[str]


def write_chunks(
    conn: sqlcipher3.Connection, pending: list[PendingChunks], *, defer_trigram: bool = False
) -> None:
    """The vocabulary of all of them in one pass, then their FTS rows, last (see
    `insert_chunk_rows`: nothing after them makes FTS5 write a segment before the commit).
    `defer_trigram`: the porter rows only, and each source marked for the catch-up that
    writes its trigram blocks (capy.store.trigram_backlog)."""
    _term_delta(pending).apply(conn)
    if defer_trigram:
        for item in pending:
            defer(conn, item.source_id)
    tables = ("chunks",) if defer_trigram else None
    for item in pending:
        insert_chunk_rows(conn, item.source_id, item.chunks, tables=tables)


@dataclass(frozen=True)
class EncodedChunks:
    """`write_chunks` of some sources made ready for a writer thread: the vocabulary delta and
    each FTS table's rows as JSON, each written by ONE statement (`write_encoded`). SQLite
    steps a statement with the GIL released from start to end, so the thread that encoded
    them goes on preparing the next sources meanwhile; `executemany` would take the GIL back
    for every row, and wait for it while the other thread runs Python."""

    terms: TermDelta
    tables: dict[str, str]  # FTS table -> its rows as a JSON array

    @classmethod
    def of(cls, pending: list[PendingChunks]) -> EncodedChunks:
        rows = [row for item in pending for row in fts_rows(item.source_id, item.chunks)]
        tables = {table: json.dumps(list(_table_rows(table, rows))) for table in _FTS_INSERTS}
        return cls(_term_delta(pending), tables)


def write_encoded(conn: sqlcipher3.Connection, encoded: EncodedChunks) -> None:
    """What `write_chunks` writes, from `EncodedChunks`, in the same order."""
    encoded.terms.apply_as_json(conn)
    for table, rows in encoded.tables.items():
        conn.execute(_FTS_INSERTS_JSON[table], (rows,))


def _term_delta(pending: list[PendingChunks]) -> TermDelta:
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for item in pending:
        added.update(item.added)
        removed.update(item.removed)
    return TermDelta.of(added, removed)


def set_index_version(conn: sqlcipher3.Connection, version: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('index_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (version,),
    )
