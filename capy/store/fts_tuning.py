"""FTS5 settings for a bulk load, in force only inside the load's own transaction.

FTS5 keeps new rows in an in-memory hash and writes it out as a new segment when the hash
passes its size (1 MB) and at commit; with `automerge` (4 by default) every few segments of a
level are merged into one at the next level as they appear. A batch of several MB writes a
segment per MB and would merge them in between, only to merge the result again later. Inside a
batch's transaction incremental merging waits (`BULK_AUTOMERGE`; `crisismerge`, 16 segments on
one level, still bounds the pile), and the value in force is set back before the transaction
commits: other connections never see the bulk value, nothing is left to restore after a
crash, and the next ordinary write merges as usual. Measured on 3.8 MB of real text: 15-20%
less CPU for the inserts.

The hash doubles to 2 MB (`BULK_HASHSIZE`) for the load, so a batch writes half as many
segments: text with many distinct trigrams (logs with ids and timestamps) otherwise piled up
the 16 segments that force a crisis merge inside the batch, which cost a third of the inserts'
CPU (1 MB of generated log, 3 MB of chunk text: 1.10 -> 0.79 s; 5.7 MB of real text 1.14 ->
0.92 s; code, markdown, JSON and 2 MB of real text unchanged). 4 MB and more cost more than
they saved: the hash itself grows slower to insert into.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlcipher3

FTS_TABLES = ("chunks", "chunks_trigram")
BULK_AUTOMERGE = 0
BULK_HASHSIZE = 2 * 1024 * 1024
# What each table holds when it stores no value of its own.
FTS5_DEFAULTS = {"automerge": 4, "hashsize": 1024 * 1024}
_BULK = {"automerge": BULK_AUTOMERGE, "hashsize": BULK_HASHSIZE}


@contextmanager
def bulk_load(conn: sqlcipher3.Connection) -> Iterator[None]:
    """Bulk settings for the rest of the caller's write transaction, restored before it ends
    (also on an error: the connection's in-memory copy of the settings is then right even
    before the rollback discards the writes)."""
    saved = {table: _settings(conn, table) for table in FTS_TABLES}
    try:
        for table in FTS_TABLES:
            for name, value in _BULK.items():
                _set(conn, table, name, value)
        yield
    finally:
        if conn.in_transaction:
            for table, values in saved.items():
                for name, value in values.items():
                    _set(conn, table, name, value)


def _settings(conn: sqlcipher3.Connection, table: str) -> dict[str, int]:
    """The table's own values of the bulk settings, or FTS5's defaults where it stores none."""
    names = tuple(FTS5_DEFAULTS)
    stored = dict(
        conn.execute(
            f"SELECT k, v FROM {table}_config WHERE k IN ({', '.join('?' * len(names))})", names
        )
    )
    return {name: int(stored.get(name, default)) for name, default in FTS5_DEFAULTS.items()}


def _set(conn: sqlcipher3.Connection, table: str, name: str, value: int) -> None:
    conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", (name, value))
