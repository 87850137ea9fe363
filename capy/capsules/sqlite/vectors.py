"""Chunk vectors on SQLCipher (written by the embed stage when the semantic layer is there)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlcipher3

from capy.store.migrations import chunk_rowid_range


def chunk_texts(conn: sqlcipher3.Connection, n: int) -> list[tuple[int, str]]:
    """Capsule `n`'s chunks as (ordinal, title and content), in order."""
    first, last = chunk_rowid_range(n)
    rows = conn.execute(
        "SELECT ordinal, title, content FROM capsule_chunks WHERE rowid BETWEEN ? AND ? "
        "ORDER BY rowid",
        (first, last),
    )
    return [(int(ordinal), f"{title}\n{content}".strip()) for ordinal, title, content in rows]


def session_neighbours(
    conn: sqlcipher3.Connection, n: int, before: int, after: int
) -> tuple[list[str], list[str]]:
    """The contents of up to `before` capsules of capsule `n`'s session logged just before it
    (oldest first) and up to `after` just after it; none for a capsule without a session."""
    row = conn.execute("SELECT session_id FROM capsules WHERE n = ?", (n,)).fetchone()
    if row is None or row[0] is None or before + after == 0:
        return [], []
    earlier = conn.execute(
        "SELECT content FROM capsules WHERE session_id = ? AND n < ? AND forgotten_reason IS NULL "
        "ORDER BY n DESC LIMIT ?",
        (row[0], n, before),
    ).fetchall()
    later = conn.execute(
        "SELECT content FROM capsules WHERE session_id = ? AND n > ? AND forgotten_reason IS NULL "
        "ORDER BY n LIMIT ?",
        (row[0], n, after),
    ).fetchall()
    return [str(c) for (c,) in reversed(earlier)], [str(c) for (c,) in later]


def clear_vectors(conn: sqlcipher3.Connection, n: int, model: str) -> None:
    conn.execute("DELETE FROM capsule_vectors WHERE capsule_n = ? AND model = ?", (n, model))


def write_vectors(
    conn: sqlcipher3.Connection,
    n: int,
    vectors: Sequence[tuple[int, bytes]],
    model: str,
    dims: int,
    version: str,
) -> None:
    conn.executemany(
        "INSERT INTO capsule_vectors (capsule_n, ordinal, model, dims, vector, version) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(n, ordinal, model, dims, vector, version) for ordinal, vector in vectors],
    )


def vector_changes(conn: sqlcipher3.Connection) -> str:
    """The log's count of writes to the vectors (a trigger keeps it): equal means unchanged."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vectors.changes'").fetchone()
    return "" if row is None else str(row[0])


def model_vectors(conn: sqlcipher3.Connection, model: str) -> list[tuple[int, bytes]]:
    """Every (capsule n, vector) of `model`, by capsule then chunk."""
    rows = conn.execute(
        "SELECT capsule_n, vector FROM capsule_vectors WHERE model = ? ORDER BY capsule_n, ordinal",
        (model,),
    )
    return [(int(n), bytes(vector)) for n, vector in rows]
