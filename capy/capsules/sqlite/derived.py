"""Derived rows on SQLCipher that more than one writer touches: a capsule's chunks.

The chunk stage writes them and erasure removes them; both go through here, so the two FTS
tables and the chunk-set record always change together.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlcipher3

from capy.store.migrations import chunk_rowid, chunk_rowid_range

CHUNK_TABLES = ("capsule_chunks", "capsule_chunks_trigram")


def clear_chunks(conn: sqlcipher3.Connection, n: int) -> None:
    """Remove capsule `n`'s chunks from both FTS tables, and its chunk-set record."""
    # The chunk-set record is written with the chunks: without it there is nothing to remove,
    # and asking it first spares two FTS deletes (most of a new capsule's chunk stage).
    if (
        conn.execute("SELECT 1 FROM capsule_chunk_sets WHERE capsule_n = ?", (n,)).fetchone()
        is None
    ):
        return
    first, last = chunk_rowid_range(n)
    for table in CHUNK_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", (first, last))
    conn.execute("DELETE FROM capsule_chunk_sets WHERE capsule_n = ?", (n,))


def write_chunks(
    conn: sqlcipher3.Connection, n: int, chunks: Sequence[tuple[str, str]], version: str
) -> None:
    """Store capsule `n`'s (title, content) chunks in both FTS tables, in order, and record the
    derivation version they were made with. The caller cleared the old ones."""
    rows = [
        (chunk_rowid(n, ordinal), title, content, n, ordinal)
        for ordinal, (title, content) in enumerate(chunks)
    ]
    conn.executemany(
        "INSERT INTO capsule_chunks (rowid, title, content, capsule_n, ordinal) "
        "VALUES (?, ?, ?, ?, ?)",
        rows,
    )
    # The trigram table is an index only: it takes the text to index and stores none of it.
    conn.executemany(
        "INSERT INTO capsule_chunks_trigram (rowid, title, content) VALUES (?, ?, ?)",
        [row[:3] for row in rows],
    )
    conn.execute(
        "INSERT INTO capsule_chunk_sets (capsule_n, version, chunks) VALUES (?, ?, ?)",
        (n, version, len(rows)),
    )
