"""Trigram blocks written after the call that indexed their source, and found meanwhile.

The trigram table costs about three quarters of what writing a source's FTS rows costs (on
the 6.1 MB of real files `capy bench peer` indexes: 1.4-2.0 s of CPU for the trigram blocks,
0.4-0.5 s for the porter rows). A long-lived process that can write them a moment later (the
MCP server, `capy.server.trigram_upkeep`) indexes a source with its row, its porter rows and
its vocabulary in the call's transaction, and a marker in `meta` (`trigram_pending:<id>`) in
place of its trigram blocks; `catch_up` writes the blocks of marked sources and drops their
markers, a slice of blocks a transaction (a large source's marker says how far it got). So:
- a reader never sees a half-indexed source: the call's transaction holds everything a search
  reads of it, and each catch-up transaction writes blocks and moves the marker past them
  together, so every chunk is in a written block or in the marker's unwritten rest;
- a source not yet in the trigram table is still found by substring: the trigram list reads
  the chunks of marked sources in scope beside its ranked blocks (`backlog`,
  `capy.store.trigram_blocks.top_chunks`), and tests them as it tests a block's chunks;
- nothing is lost when the process ends before catching up: the markers are committed with
  the source, and whichever process catches up next (the next server) writes the blocks.
Every writer that drops a source's chunks drops its marker too (`forget`); a source deleted
by the `sources` trigger leaves its marker, which the catch-up then drops; a catch-up clears
the rowids of what it writes first, so a marker left over never doubles a block.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sqlcipher3

from capy.store.database import transaction
from capy.store.migrations import CHUNK_ORDINAL_BITS
from capy.store.trigram_blocks import TRIGRAM_BLOCK_CHUNKS, trigram_blocks

PREFIX = "trigram_pending:"
# Every marker key, as a range of the primary key (';' sorts right after ':').
_MARKERS = "meta.key >= 'trigram_pending:' AND meta.key < 'trigram_pending;'"
_SOURCE_OF_MARKER = f"CAST(substr(meta.key, {len(PREFIX) + 1}) AS INTEGER)"
# Chunks the backlog may hold before a deferring writer writes its blocks itself: a search
# reads every pending chunk in scope, so the backlog bounds what that costs (4,096 chunks is
# a few MB of text, tens of milliseconds a search on a 2-core machine).
MAX_PENDING_CHUNKS = 4096
# Chunks one catch-up transaction writes at most (whole blocks): short enough that a call
# waiting for the write lock waits little, long enough to write few segments.
CATCH_UP_CHUNKS = 256
_INSERT_BLOCKS_JSON = (
    "INSERT INTO chunks_trigram (rowid, title, content) "
    "SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)"
)


def defer(conn: sqlcipher3.Connection, source_id: int) -> None:
    """Mark a source's trigram blocks as still to write, in the writer's transaction. The
    marker's value is the first chunk ordinal whose block is not written yet."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, '0') "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (f"{PREFIX}{source_id}",),
    )


def forget(conn: sqlcipher3.Connection, source_id: int) -> None:
    """Drop a source's marker (its chunks are being dropped or written whole)."""
    conn.execute("DELETE FROM meta WHERE key = ?", (f"{PREFIX}{source_id}",))


def pending_chunks(conn: sqlcipher3.Connection) -> int:
    """Chunks of marked sources (markers of deleted sources count none)."""
    row = conn.execute(
        f"SELECT coalesce(sum(s.chunk_count), 0) FROM meta JOIN sources AS s "
        f"ON s.id = {_SOURCE_OF_MARKER} WHERE {_MARKERS}"
    ).fetchone()
    return int(row[0])


def should_defer(conn: sqlcipher3.Connection, chunks: int) -> bool:
    """Whether a source of `chunks` chunks may join the backlog (inside the writer's
    transaction, so the bound holds with concurrent writers)."""
    return pending_chunks(conn) + chunks <= MAX_PENDING_CHUNKS


@dataclass(frozen=True)
class Backlog:
    """What a trigram search reads beside its ranked blocks: the aligned block rowids not yet
    written of every marked source in scope, and how many chunks those of all marked sources
    hold (the table's totals leave them out)."""

    blocks: list[int]
    chunks: int


def backlog(conn: sqlcipher3.Connection, allowed: tuple[str, list[object]]) -> Backlog:
    """The backlog as `allowed` (a condition on `sources`) sees it; one primary-key range read
    when nothing is pending, the usual case. Blocks a catch-up already wrote are in the table."""
    condition, params = allowed
    rows = conn.execute(
        f"SELECT s.id, CAST(meta.value AS INTEGER), s.chunk_count, "
        f"s.id IN (SELECT id FROM sources WHERE {condition}) "
        f"FROM meta JOIN sources AS s ON s.id = {_SOURCE_OF_MARKER} WHERE {_MARKERS}",
        params,
    ).fetchall()
    blocks = [
        (source_id << CHUNK_ORDINAL_BITS) + start
        for source_id, done, count, in_scope in rows
        if in_scope
        for start in range(done, count, TRIGRAM_BLOCK_CHUNKS)
    ]
    return Backlog(blocks, sum(max(count - done, 0) for _, done, count, _ in rows))


def catch_up(conn: sqlcipher3.Connection, most_chunks: int = CATCH_UP_CHUNKS) -> bool:
    """Write the blocks of marked sources, `most_chunks` chunks' worth (whole blocks, so a
    large source takes several transactions; its marker says how far it got), in one
    transaction; whether any marker is left."""
    most_chunks = max(most_chunks - most_chunks % TRIGRAM_BLOCK_CHUNKS, TRIGRAM_BLOCK_CHUNKS)
    with transaction(conn):
        markers = conn.execute(
            f"SELECT {_SOURCE_OF_MARKER}, CAST(meta.value AS INTEGER), "
            f"coalesce(s.chunk_count, 0) FROM meta LEFT JOIN sources AS s "
            f"ON s.id = {_SOURCE_OF_MARKER} WHERE {_MARKERS} ORDER BY 1"
        ).fetchall()
        slices, left = [], most_chunks
        for source_id, done, count in markers:
            if left <= 0:
                break
            end = min(count, done + left)
            slices.append((source_id, done, end, end >= count))
            left -= end - done
        # The markers first: FTS5 writes its pending rows out as a segment before a statement
        # that may roll back alone, so the FTS statements come last.
        for source_id, _done, end, whole in slices:
            if whole:
                forget(conn, source_id)
            else:
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = ?", (str(end), f"{PREFIX}{source_id}")
                )
        for source_id, done, end, _whole in slices:
            if end > done:
                _write_blocks(conn, source_id, done, end)
        return sum(whole for *_, whole in slices) < len(markers)


def _write_blocks(conn: sqlcipher3.Connection, source_id: int, done: int, end: int) -> None:
    """The blocks of chunk ordinals [done, end) of a source (block-aligned), replacing any."""
    first = (source_id << CHUNK_ORDINAL_BITS) + done
    last = (source_id << CHUNK_ORDINAL_BITS) + end - 1
    conn.execute("DELETE FROM chunks_trigram WHERE rowid BETWEEN ? AND ?", (first, last))
    rows = conn.execute(
        "SELECT rowid, title, content FROM chunks WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        (first, last),
    )
    # One statement a slice: SQLite steps it with the GIL released throughout.
    conn.execute(_INSERT_BLOCKS_JSON, (json.dumps(list(trigram_blocks(rows))),))


class WriteTurn:
    """Who writes next inside one process: a tool call waiting to write goes before the
    catch-up, which only starts a transaction when no call waits, and never two at once.
    (Other processes meet the catch-up at SQLite's write lock, as any writer.)"""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._writing = False
        self._calls_waiting = 0

    @contextmanager
    def call(self) -> Iterator[None]:
        with self._state:
            self._calls_waiting += 1
            try:
                while self._writing:
                    self._state.wait()
            finally:
                self._calls_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def catch_up(self) -> Iterator[None]:
        with self._state:
            while self._writing or self._calls_waiting:
                self._state.wait()
            self._writing = True
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._state:
            self._writing = False
            self._state.notify_all()


WRITE_TURN = WriteTurn()
