"""The newest chunks of the knowledge base, as the lowest rowid among them.

An optional ranked list (one that can only add to what was found, `capy.retrieval.engine`)
reads only the newest chunks. Its budget of SQLite steps bounds its work only where FTS5 hands
rows back often: an AND or phrase query whose words are each common but seldom meet (the
trigram list of known words, where each trigram is in a large share of all chunks) walks the
whole doclists inside a few steps, so its cost grows with the store however small the budget.
A rowid floor is a constraint FTS5 seeks every doclist to, so such a list reads a bounded part
of each doclist at any store size, and the same part on any machine. Chunk rowids grow with
their source's id (`capy.store.migrations.chunk_rowid`), so the newest chunks are the highest
rowids, the order the ranked lists' windows already read in.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlcipher3


def newest_rows_floor(conn: sqlcipher3.Connection, rows: int) -> int | None:
    """A rowid the newest `rows` chunks are at or above and every older chunk below; None when
    the store holds no more than that (every chunk is among them: no floor is needed)."""
    # FTS5's per-row size table: one small row per chunk, keyed by rowid, so stepping over
    # `rows` of them reads a few pages where the chunks' own rows would read their text.
    found = conn.execute(
        "SELECT id FROM chunks_docsize ORDER BY id DESC LIMIT 1 OFFSET ?", (rows,)
    ).fetchone()
    return None if found is None else found[0] + 1
