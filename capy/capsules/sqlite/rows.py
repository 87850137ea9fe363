"""The log's rows as stored, read and written raw: the floor `capy bench capsules-import`
measures capy's import against (the same rows, no checks, no chain, no outbox)."""

from __future__ import annotations

import sqlcipher3

from capy.store.database import transaction

_ROW = (
    "id, tenant, project, seq, source, kind, content, metadata, created_at, created_ts, "
    "prev_hash, chain_hash, written_at"
)


def stored_rows(conn: sqlcipher3.Connection) -> list[tuple]:
    return conn.execute(f"SELECT {_ROW} FROM capsules ORDER BY n").fetchall()


def insert_rows(conn: sqlcipher3.Connection, rows: list[tuple]) -> None:
    """`rows` (as `stored_rows` gives them) in one transaction, nothing else."""
    with transaction(conn):
        conn.executemany(f"INSERT INTO capsules ({_ROW}) VALUES ({', '.join('?' * 13)})", rows)
