"""Whether the knowledge base holds vectors (migration 0008), asked before anything of the
semantic layer is imported: a store without vectors searches lexically at the cost of one read."""

from __future__ import annotations

import sqlcipher3


def has_vectors(conn: sqlcipher3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM source_vectors LIMIT 1").fetchone() is not None
