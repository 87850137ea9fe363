"""Search hits noted beside the database, folded into `sources` by the next writer.

A search is a read. Counting its hits in the database made every search a write transaction:
the write lock, a WAL frame, and, for a short-lived process (`capy search`), the WAL header sync
and a checkpoint with two more fsyncs at close. Retention is the only reader of the counts, so
a search appends `<source id> <unix time>` lines to `<db>.access` instead (one `write` under an
advisory lock, no fsync: the line outlives the process, as the WAL frames a commit leaves
unsynced in WAL mode do), and the counts reach `sources` when something that reads them needs
them:

- a cleanup folds the log into `sources` before it plans and before it applies, in a
  transaction of its own, so its decisions see every hit;
- the per-kind tiers of `capy stats` add the pending hits in memory (a report never writes);
- a search that finds the log grown past the retention pack's `cleanup.access_log_fold_bytes`
  folds it itself, so the file stays small whatever runs.

A fold credits a hit only to a source created no later than the hit (`created_at`), so a source
id reused after a removal never inherits the hits of the source it replaced. A fold that dies
after its commit and before emptying the log counts those hits twice at worst (a retention
score moves a little); one that dies before its commit leaves the log as it was. What a search
returns never depends on these counts.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlcipher3

SUFFIX = ".access"
_CHUNK = 1 << 16


def log_path(db_path: Path | str) -> str:
    return f"{db_path}{SUFFIX}"


def record_hits(
    conn: sqlcipher3.Connection,
    db_path: Path | str,
    source_ids: Iterable[int],
    fold_bytes: int | None,
    around_write: Callable[[Callable[[], None]], None],
) -> None:
    """A search's hits: appended to the log, which the search folds itself once it has grown
    past `fold_bytes`; counted in the database only where the log cannot be written. Writes to
    the database go through `around_write`. Never raises for a busy or read-only store."""
    from capy.store.database import DatabaseError

    ids = sorted({int(source_id) for source_id in source_ids})
    if not ids:
        return
    try:
        size = note_access(db_path, ids)
    except OSError:
        around_write(lambda: _count_now(conn, ids))
        return
    if fold_bytes is not None and size > fold_bytes and not conn.in_transaction:
        with contextlib.suppress(DatabaseError, OSError):  # the next writer folds it
            around_write(lambda: fold_access(conn, db_path))


def _count_now(conn: sqlcipher3.Connection, ids: list[int]) -> None:
    from capy.store.database import DatabaseError

    sql = (
        "UPDATE sources SET access_count = access_count + 1, accessed_at = unixepoch() "
        f"WHERE id IN ({', '.join('?' * len(ids))})"
    )
    owns_transaction = not conn.in_transaction  # inside a caller's: just join it
    try:
        if owns_transaction:
            conn.execute("BEGIN IMMEDIATE")
        conn.execute(sql, ids)
        if owns_transaction:
            conn.execute("COMMIT")
    except DatabaseError:
        if owns_transaction and conn.in_transaction:
            conn.execute("ROLLBACK")


def note_access(db_path: Path | str, source_ids: Iterable[int], now: int | None = None) -> int:
    """Append one line per source; returns the log's size after the append. Raises OSError
    when the log cannot be written (the caller falls back to counting in the database)."""
    stamp = int(time.time()) if now is None else now
    lines = "".join(f"{int(source_id)} {stamp}\n" for source_id in sorted(set(source_ids)))
    if not lines:
        return 0
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(log_path(db_path), flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a fold empties the file under the same lock
        os.write(fd, lines.encode("ascii"))
        return os.fstat(fd).st_size
    finally:
        os.close(fd)  # closing releases the lock


def pending_access(db_path: Path | str) -> dict[int, tuple[int, int]]:
    """Hits not folded yet: source id -> (count, latest time). Empty when there is no log."""
    try:
        fd = os.open(log_path(db_path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return {}
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        return _parsed(_read_all(fd))
    finally:
        os.close(fd)


def fold_access(conn: sqlcipher3.Connection, db_path: Path | str) -> int:
    """Move the pending hits into `sources` in one transaction, then empty the log; returns
    how many sources were credited. Must not be called inside a caller's transaction (the log
    is emptied only once the counts are committed)."""
    from capy.store.database import transaction

    try:
        fd = os.open(log_path(db_path), os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # appends wait until the log is emptied
        pending = _parsed(_read_all(fd))
        if pending:
            with transaction(conn):
                conn.executemany(
                    "UPDATE sources SET access_count = access_count + ?, "
                    "accessed_at = max(coalesce(accessed_at, 0), ?) "
                    "WHERE id = ? AND created_at <= ?",
                    [
                        (n, last, source_id, last)
                        for source_id, (n, last) in sorted(pending.items())
                    ],
                )
        os.ftruncate(fd, 0)
        return len(pending)
    finally:
        os.close(fd)


def with_pending(
    rows: Iterable[tuple[int, str, int, int, float | None]],
    pending: dict[int, tuple[int, int]],
) -> Iterator[tuple[int, str, int, int, float | None]]:
    """(id, kind, last used, access count, salience) rows with the pending hits added, as a
    fold would leave them."""
    for source_id, kind, last_used, count, salience in rows:
        extra = pending.get(source_id)
        if extra is not None:
            count, last_used = count + extra[0], max(last_used, extra[1])
        yield source_id, kind, last_used, count, salience


def _read_all(fd: int) -> bytes:
    parts = []
    while part := os.read(fd, _CHUNK):
        parts.append(part)
    return b"".join(parts)


def _parsed(data: bytes) -> dict[int, tuple[int, int]]:
    """Well-formed lines only: a line cut short by a full disk is dropped, not misread."""
    pending: dict[int, tuple[int, int]] = {}
    for line in data.split(b"\n")[:-1]:  # the last piece has no newline: unfinished
        fields = line.split(b" ")
        if len(fields) != 2 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        source_id, stamp = int(fields[0]), int(fields[1])
        count, last = pending.get(source_id, (0, 0))
        pending[source_id] = (count + 1, max(last, stamp))
    return pending
