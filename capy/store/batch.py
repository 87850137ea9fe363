"""Indexing many sources at once: a folder, several paths, a benchmark's documents.

Each source is prepared (redaction, chunking, vocabulary counts, compression) exactly as
`index_content` prepares it, and a whole batch is written in ONE transaction, since FTS5
flushes its pending terms into a new segment (and merges segments) at every commit: 36 files
committed one by one cost seconds that one commit does not.

Inside the transaction the sources go in groups: each group's rows are written, each under its
own savepoint, then its FTS rows and vocabulary on a writer thread (`_FtsWriter`: one statement
per table, which SQLite steps with the GIL released), while this thread prepares the sources
of the next group. FTS5 writes a segment at every savepoint that follows FTS rows, so each
group ends as one segment; a group holds at least `GROUP_BYTES` (fewer at the end). Readers
see a batch only once it commits, so:
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
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlcipher3

from capy.store.chunkstore import EncodedChunks, PendingChunks, write_chunks, write_encoded
from capy.store.database import connect, transaction
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

# The retention pack has no setting for how much one commit may hold, so the engine bounds it.
# The transaction spans the preparing of its groups after the first (hidden under the FTS
# inserts while the writer thread is the slower one, not otherwise), so it holds half the 8 MB
# of text that a write-only transaction held in well under the 5 s a waiting writer's busy
# timeout allows on a slow 2-core machine.
BATCH_SOURCES = 500
BATCH_BYTES = 4 * 1024 * 1024
# Text a group of sources holds at least before its rows are written (fewer only at the end of
# the input). Each group's FTS rows end up as a segment of their own (the next group's row
# writes make FTS5 flush them), and small segments cost merging: on 3.8 MB of real text, groups
# of 256 KB took 5-10% more CPU than one group, groups of 1 MB about the same. The first group
# of a transaction is smaller, so the writer thread starts early; later ones hold what was
# prepared while the writer inserted the one before, and at least `GROUP_BYTES`.
FIRST_GROUP_BYTES = 256 * 1024
GROUP_BYTES = 1024 * 1024

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
    bounds = _Bounds(batch_sources, batch_bytes)
    with (
        _Preparer(store, items, rules, outcomes, progress, total) as preparer,
        _FtsWriter(store.conn) as fts,
    ):
        group = preparer.take(bounds, fts.busy, FIRST_GROUP_BYTES)
        while group:
            group = _write(store.conn, group, preparer, fts, bounds, outcomes, rules)
            group = group or preparer.take(bounds, fts.busy, FIRST_GROUP_BYTES)
    return [outcome for outcome in outcomes if outcome is not None]


@dataclass(frozen=True)
class _Bounds:
    """When a transaction closes, and how much a group waits for before its rows are written."""

    sources: int
    bytes: int

    def reached(self, sources: int, size: int) -> bool:
        return sources >= self.sources or size >= self.bytes


class _Preparer:
    """Prepares the items one at a time (`take`), on the calling thread, reading stored rows
    through a connection of its own: the store's may be busy in the FTS writer thread."""

    def __init__(
        self,
        store: Store,
        items: Iterable[BatchItem],
        rules: RuleSet,
        outcomes: list[Outcome | None],
        progress: Progress | None,
        total: int | None,
    ) -> None:
        self.store, self.items, self.rules = store, iter(items), rules
        self.outcomes, self.progress, self.total = outcomes, progress, total
        self.lookup: sqlcipher3.Connection | None = None

    def __enter__(self) -> _Preparer:
        self.lookup = connect(self.store.path, self.store.key)
        return self

    def __exit__(self, *_: object) -> None:
        if self.lookup is not None:
            self.lookup.close()

    def take(
        self, bounds: _Bounds, busy: Callable[[], bool], least: int = GROUP_BYTES
    ) -> list[tuple[int, PreparedSource]]:
        """The next group: sources prepared while the FTS writer is `busy`, and at least
        `least` bytes of them (fewer only at the end), never past `bounds`."""
        group: list[tuple[int, PreparedSource]] = []
        size = 0
        while (busy() or size < least) and not bounds.reached(len(group), size):
            item = next(self.items, None)
            if item is None:
                break
            prepared = self._prepare(item)
            if prepared is not None:
                group.append(prepared)
                size += prepared[1].prepared.size
        return group

    def _prepare(self, item: BatchItem) -> tuple[int, PreparedSource] | None:
        slot = len(self.outcomes)
        self.outcomes.append(None)
        try:
            source = prepare_source(
                self.store,
                _content(item),
                label=item.label,
                kind=item.kind,
                content_type=item.content_type,
                rules=self.rules,
                lookup=self.lookup,
            )
        except (StoreError, OSError, UnicodeError) as error:
            self.outcomes[slot] = BatchFailure(item.label, _message(error))
            source = None
        if self.progress:
            self.progress(item.label, slot + 1, self.total)
        return None if source is None else (slot, source)


class _FtsWriter:
    """Writes a group's FTS rows and vocabulary on a thread of its own (`EncodedChunks`), while
    the calling thread prepares the next group; nothing else touches the connection until
    `wait` returns."""

    def __init__(self, conn: sqlcipher3.Connection) -> None:
        self.conn = conn
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="capy-fts")
        self.running: Future[None] | None = None

    def __enter__(self) -> _FtsWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.settle()
        self.pool.shutdown()

    @contextmanager
    def settled(self) -> Iterator[None]:
        """On the way out, however it goes, the connection is this thread's alone again: an
        error while a group is written (an interrupt, a bug) must not roll back under it."""
        try:
            yield
        finally:
            self.settle()

    def settle(self) -> None:
        running, self.running = self.running, None
        if running is not None:
            running.exception()  # waits; what it raised no longer matters

    def start(self, encoded: EncodedChunks) -> None:
        self.running = self.pool.submit(write_encoded, self.conn, encoded)

    def busy(self) -> bool:
        return self.running is not None and not self.running.done()

    def wait(self) -> None:
        running, self.running = self.running, None
        if running is None:
            return
        try:
            running.result()
        except sqlcipher3.DatabaseError as error:
            raise _ChunksFailed from error


def _content(item: BatchItem) -> str | bytes:
    return item.content() if callable(item.content) else item.content


def _write(
    conn: sqlcipher3.Connection,
    group: list[tuple[int, PreparedSource]],
    preparer: _Preparer,
    fts: _FtsWriter,
    bounds: _Bounds,
    outcomes: list[Outcome | None],
    rules: RuleSet,
) -> list[tuple[int, PreparedSource]]:
    """One transaction: groups of sources until `bounds`, each group's rows written on this
    thread and its FTS rows on the writer's while the next group is prepared. Gives the group
    prepared after the bounds were reached (the next transaction's first; none when the input
    ended, or when a failure cut the transaction short)."""
    pending: list[tuple[int, PreparedSource]] = []
    written: list[tuple[int, IndexResult]] = []
    following: list[tuple[int, PreparedSource]] = []  # prepared, not yet in this transaction
    size = 0
    try:
        try:
            with transaction(conn), bulk_load(conn), fts.settled():
                while group:
                    pending += group
                    size += sum(source.prepared.size for _, source in group)
                    rows, chunks = _rows(conn, group, outcomes, rules)
                    written += rows
                    fts.start(EncodedChunks.of(chunks))
                    following = preparer.take(bounds, fts.busy)
                    fts.wait()
                    if bounds.reached(len(pending), size):
                        break
                    group, following = following, []
        except _ChunksFailed:
            # Rare (a database error on FTS rows): the transaction rolled back whole; written
            # one source at a time instead, a source that fails is rolled back alone.
            for slot, _source in pending:
                outcomes[slot] = None
            with transaction(conn), bulk_load(conn):
                written = _one_by_one(conn, pending, outcomes, rules)
    except sqlcipher3.DatabaseError as error:  # the commit itself failed: the batch is lost
        for slot, source in pending:
            outcomes[slot] = BatchFailure(source.label, f"not stored: {_message(error)}")
        return following
    for slot, result in written:
        outcomes[slot] = result
    return following


class _ChunksFailed(Exception):
    """Writing the FTS rows of a batch failed; the caller rolls it back and goes one by one."""


def _rows(
    conn: sqlcipher3.Connection,
    group: list[tuple[int, PreparedSource]],
    outcomes: list[Outcome | None],
    rules: RuleSet,
) -> tuple[list[tuple[int, IndexResult]], list[PendingChunks]]:
    """Each source's row under its own savepoint; their FTS rows are written after all of them
    (FTS5 writes a segment at every savepoint that follows FTS rows: one per source otherwise).

    A label met twice in one group writes the chunks gathered so far first, so the second
    write sees the first one's chunks as any later write would."""
    written: list[tuple[int, IndexResult]] = []
    chunks: list[PendingChunks] = []
    labels: set[tuple[str, str]] = set()
    for slot, source in group:
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
    return written, chunks


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
