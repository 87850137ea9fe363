"""Indexing many sources at once: a folder, several paths, a benchmark's documents.

Each source is prepared outside the write lock (redaction, chunking, compression) exactly as
`index_content` prepares it; then a whole batch is written in ONE transaction, since FTS5
flushes its pending terms into a new segment (and merges segments) at every commit: 36 files
committed one by one cost seconds that one commit does not. Each source's row is written under
its own savepoint, and all FTS rows of the batch after the last of them (FTS5 writes a segment
at every savepoint that follows FTS rows); readers see a batch only once it commits, so:
- a reader never sees a half-indexed source (nor a half-written batch);
- a source that fails (refused content, a database error on its rows) is rolled back alone,
  reported by its label, and the others in the batch are still written;
- a batch that fails to commit loses only itself: the batches before it are committed.
A batch closes at `BATCH_SOURCES` sources or `BATCH_BYTES` of stored text, whichever comes
first, so that the write lock is never held for long while hooks and the server wait on it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlcipher3

from capy.store.chunkstore import PendingChunks, write_chunks
from capy.store.database import transaction
from capy.store.errors import StoreError
from capy.store.fts_tuning import bulk_load
from capy.store.indexing import (
    AUTO_CONTENT_TYPE,
    IndexResult,
    PreparedSource,
    prepare_source,
    write_source,
    write_source_row,
)

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store

# The retention pack has no setting for how much one commit may hold, so the engine bounds it:
# about 8 MB of text is written in well under the 5 s a waiting writer's busy timeout allows on
# a slow 2-core machine, and a few hundred sources share one FTS5 segment flush.
BATCH_SOURCES = 500
BATCH_BYTES = 8 * 1024 * 1024

# (label just done, sources done, sources in all or None when not known)
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class BatchItem:
    """One source to index: its content, or a function that reads it when its turn comes (so a
    folder is never held in memory whole, and a file that cannot be read fails alone)."""

    label: str
    content: str | bytes | Callable[[], str | bytes]
    kind: str = "durable"
    content_type: str = AUTO_CONTENT_TYPE


@dataclass(frozen=True)
class BatchFailure:
    """A source that was not indexed, and why (one sentence, never the content)."""

    label: str
    message: str


Outcome = IndexResult | BatchFailure


def index_batch(
    store: Store,
    items: Iterable[BatchItem],
    *,
    rules: RuleSet,
    progress: Progress | None = None,
    total: int | None = None,
    batch_sources: int = BATCH_SOURCES,
    batch_bytes: int = BATCH_BYTES,
) -> list[Outcome]:
    """Index every item; one outcome per item, in order. Never raises for one bad item."""
    outcomes: list[Outcome | None] = []
    pending: list[tuple[int, PreparedSource]] = []
    pending_bytes = 0
    for item in items:
        slot = len(outcomes)
        outcomes.append(None)
        try:
            source = prepare_source(
                store,
                _content(item),
                label=item.label,
                kind=item.kind,
                content_type=item.content_type,
                rules=rules,
            )
        except (StoreError, OSError, UnicodeError) as error:
            outcomes[slot] = BatchFailure(item.label, _message(error))
        else:
            pending.append((slot, source))
            pending_bytes += source.prepared.size
        if progress:
            progress(item.label, slot + 1, total)
        if len(pending) >= batch_sources or pending_bytes >= batch_bytes:
            _write(store.conn, pending, outcomes, rules)
            pending, pending_bytes = [], 0
    _write(store.conn, pending, outcomes, rules)
    return [outcome for outcome in outcomes if outcome is not None]


def _content(item: BatchItem) -> str | bytes:
    return item.content() if callable(item.content) else item.content


def _write(
    conn: sqlcipher3.Connection,
    pending: list[tuple[int, PreparedSource]],
    outcomes: list[Outcome | None],
    rules: RuleSet,
) -> None:
    if not pending:
        return
    try:
        try:
            with transaction(conn), bulk_load(conn):
                written = _rows_then_chunks(conn, pending, outcomes, rules)
        except _ChunksFailed:
            # Rare (a database error on FTS rows): the batch rolled back whole; written one
            # source at a time instead, a source that fails is rolled back alone.
            for slot, _source in pending:
                outcomes[slot] = None
            with transaction(conn), bulk_load(conn):
                written = _one_by_one(conn, pending, outcomes, rules)
    except sqlcipher3.DatabaseError as error:  # the commit itself failed: the batch is lost
        for slot, source in pending:
            outcomes[slot] = BatchFailure(source.label, f"not stored: {_message(error)}")
        return
    for slot, result in written:
        outcomes[slot] = result


class _ChunksFailed(Exception):
    """Writing the FTS rows of a batch failed; the caller rolls it back and goes one by one."""


def _rows_then_chunks(
    conn: sqlcipher3.Connection,
    pending: list[tuple[int, PreparedSource]],
    outcomes: list[Outcome | None],
    rules: RuleSet,
) -> list[tuple[int, IndexResult]]:
    """Each source's row under its own savepoint, then all their FTS rows at the end (FTS5
    writes a segment at every savepoint that follows FTS rows: one per source otherwise).

    A label met twice in one batch writes the chunks gathered so far first, so the second
    write sees the first one's chunks as any later write would."""
    written: list[tuple[int, IndexResult]] = []
    chunks: list[PendingChunks] = []
    labels: set[tuple[str, str]] = set()
    for slot, source in pending:
        if (source.label, source.kind) in labels:
            _write_chunks(conn, chunks)
            chunks, labels = [], set()
        row = functools.partial(write_source_row, conn, source, rules)
        done = _alone(conn, slot, source, outcomes, row)
        if done is None:
            continue
        result, rows = done
        written.append((slot, result))
        labels.add((source.label, source.kind))
        if rows is not None:
            chunks.append(rows)
    _write_chunks(conn, chunks)
    return written


def _write_chunks(conn: sqlcipher3.Connection, chunks: list[PendingChunks]) -> None:
    try:
        write_chunks(conn, chunks)
    except sqlcipher3.DatabaseError as error:
        raise _ChunksFailed from error


def _one_by_one(
    conn: sqlcipher3.Connection,
    pending: list[tuple[int, PreparedSource]],
    outcomes: list[Outcome | None],
    rules: RuleSet,
) -> list[tuple[int, IndexResult]]:
    done = [
        (
            slot,
            _alone(
                conn, slot, source, outcomes, functools.partial(write_source, conn, source, rules)
            ),
        )
        for slot, source in pending
    ]
    return [(slot, result) for slot, result in done if result is not None]


def _alone(
    conn: sqlcipher3.Connection,
    slot: int,
    source: PreparedSource,
    outcomes: list[Outcome | None],
    write: Callable[[], Any],
) -> Any:
    """`write()` under the source's own savepoint; a failure rolls back that source alone, is
    recorded in its slot, and gives None."""
    try:
        with _savepoint(conn):
            return write()
    except (StoreError, sqlcipher3.DatabaseError) as error:
        outcomes[slot] = BatchFailure(source.label, _message(error))
        return None


@contextmanager
def _savepoint(conn: sqlcipher3.Connection) -> Iterator[None]:
    conn.execute("SAVEPOINT capy_source")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK TO capy_source")
        conn.execute("RELEASE capy_source")
        raise
    conn.execute("RELEASE capy_source")


def _message(error: BaseException) -> str:
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    return message.rstrip(".")
