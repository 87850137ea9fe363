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


# The most capsules on either side a capsule's vector may read (the semantic pack schema's
# `capsule_context` maximum): forgetting a capsule re-embeds this many neighbours each way.
NEIGHBOUR_REACH = 4


def forget_from_neighbours(conn: sqlcipher3.Connection, n: int, session_id: object) -> None:
    """Drop the vectors of the capsules around `n` in its session, which may have read its
    text, and queue their embed jobs again so they are embedded without it."""
    if not isinstance(session_id, str):
        return
    rows = conn.execute(
        "SELECT n, id FROM (SELECT n, id FROM capsules WHERE session_id = ? AND n < ? "
        "ORDER BY n DESC LIMIT ?) UNION ALL SELECT n, id FROM (SELECT n, id FROM capsules "
        "WHERE session_id = ? AND n > ? ORDER BY n LIMIT ?)",
        (session_id, n, NEIGHBOUR_REACH, session_id, n, NEIGHBOUR_REACH),
    ).fetchall()
    conn.executemany("DELETE FROM capsule_vectors WHERE capsule_n = ?", [(m,) for m, _ in rows])
    conn.executemany(
        "UPDATE capsule_jobs SET state = 'ready', attempts = 0, not_before = 0 "
        "WHERE target = ? AND stage = 'embed' AND state IN ('done', 'dead')",
        [(ident,) for _, ident in rows],
    )


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
