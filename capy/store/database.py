"""Opening a knowledge database: key, pragmas, migrations, and telling wrong keys from damage.

How a file that will not open is judged (SQLCipher gives a wrong key and a damaged first page
the same error, a failed HMAC on page 1, so the rule leans on facts around the file):
1. An empty or missing file is a new database.
2. A file starting with `SQLite format 3\\0` is plaintext: `PlaintextDatabaseError` (suggests
   `capy encrypt`); never moved, never overwritten.
3. A file shorter than one page or not a whole number of 4096-byte pages is truncated: corrupt.
4. Page 1 fails to decrypt: if the key-check file written beside the database when it was
   created (`knowledge.db.keycheck`, a keyed hash that reveals nothing about the key) matches the
   key in use, the key is right and the file is corrupt; otherwise (different or no key check)
   it is a wrong key: `WrongKeyError`, and the file is left untouched.
5. The key verifies but SQLite reports corruption while reading the schema or migrating, or
   `PRAGMA quick_check` fails (run when `verify=True`): corrupt.
A corrupt file is moved aside as `knowledge.db.corrupt-<UTC timestamp>` (with its -wal/-shm),
a fresh database is created, and `notify` says so; nothing is deleted. Every failure is judged a
second time under an exclusive lock file with a fresh connection before anything is moved, so a
database another process is creating at that moment is never mistaken for a damaged one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import sqlcipher3

from capy.atomicfile import write_atomically
from capy.store.errors import CorruptDatabaseError, PlaintextDatabaseError, WrongKeyError
from capy.store.keys import DatabaseKey

PAGE_SIZE = 4096  # SQLCipher 4's default; capy never changes it
BUSY_TIMEOUT_S = 5.0
WRITE_LOCK_DEADLINE_S = 30.0
SQLITE_HEADER = b"SQLite format 3\x00"
DatabaseError = sqlcipher3.DatabaseError

Notify = Callable[[str], None]
# Brings a freshly opened connection's schema up to date (the knowledge base's migrations unless
# another database, such as the vault, passes its own).
Migrator = Callable[[sqlcipher3.Connection], object]


def is_plaintext(path: Path) -> bool:
    """Whether `path` starts as an unencrypted SQLite file does (here, not in maintenance:
    every open asks, and maintenance's imports are for the commands that change a file)."""
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def stderr_notice(message: str) -> None:
    print(f"capy: {message}", file=sys.stderr)


class _Damaged(Exception):
    """Internal: the file is judged corrupt for `reason`, pending confirmation under the lock."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def connect(path: Path, key: DatabaseKey | None) -> sqlcipher3.Connection:
    """A bare connection with the key applied (None: plaintext), nothing read yet.

    Autocommit mode: capy issues BEGIN itself, so writers can take the lock up front. A
    connection is used by one thread at a time, but a long-lived process's pool may hand it to
    another worker thread later, and closes it at exit from whichever thread runs the exit.
    """
    conn = sqlcipher3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    # SQLCipher logs every failed HMAC to stderr; capy reports such failures itself.
    conn.execute("PRAGMA cipher_log_level = NONE")
    if key is not None:
        conn.execute(key.pragma())
    return conn


def open_database(
    path: Path,
    key: DatabaseKey,
    *,
    verify: bool = False,
    migrate: bool = True,
    notify: Notify = stderr_notice,
    migrator: Migrator | None = None,
) -> sqlcipher3.Connection:
    """Open (creating if needed) the encrypted database at `path`, migrated and ready to use.

    `verify` adds `PRAGMA quick_check` (a full read; worth it for long-lived processes such as the
    MCP server, too slow for a hook that opens a connection per tool call).
    Raises `WrongKeyError`, `PlaintextDatabaseError`, or `CorruptDatabaseError` when a damaged
    file could not be replaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    step = (migrator or _migrate_knowledge_base) if migrate else None
    if _is_new(path):
        # Creation is serialised: SQLCipher picks a file's salt when it writes page 1, and two
        # connections creating one file at once would disagree about it.
        with file_lock(path):
            return _open_under_lock(path, key, verify, step, notify)
    try:
        return _open_once(path, key, verify, step)
    except (_Damaged, WrongKeyError):
        with file_lock(path):
            return _open_under_lock(path, key, verify, step, notify)


def _open_under_lock(
    path: Path, key: DatabaseKey, verify: bool, migrate: Migrator | None, notify: Notify
) -> sqlcipher3.Connection:
    try:
        return _open_once(path, key, verify, migrate)
    except _Damaged as damage:
        moved = quarantine(path)
        notify(
            f"the database {path} is damaged ({damage.reason}); moved it aside to "
            f"{moved.name} in the same folder and started a fresh one (nothing was deleted)"
        )
    try:
        return _open_once(path, key, verify, migrate)
    except _Damaged as damage:
        raise CorruptDatabaseError(
            f"a fresh database at {path} failed too ({damage.reason}); check the disk and "
            "free space, or point capy elsewhere with --db or CAPY_DB_PATH"
        ) from None


def _open_once(
    path: Path, key: DatabaseKey, verify: bool, migrate: Migrator | None
) -> sqlcipher3.Connection:
    create_private(path)
    _check_file(path)
    conn = connect(path, key)
    try:
        _check_key(conn, path, key)
        _configure(conn)
        if verify:
            _quick_check(conn)
        if migrate is not None:
            migrate(conn)
        write_key_check(path, key)
    except DatabaseError as error:
        conn.close()
        if is_corruption(error):
            raise _Damaged(f"SQLite reports: {error}") from None
        raise
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate_knowledge_base(conn: sqlcipher3.Connection) -> None:
    from capy.store.migrations import migrate

    migrate(conn)


def create_private(path: Path) -> None:
    """Make a missing database file readable by its owner only, before SQLite creates it with
    the umask's mode (0644 by default): SQLite then gives its -wal and -shm the same mode. The
    contents are encrypted either way; the mode keeps a folder made by something else (or a
    `--db` path outside capy's 0700 folder) from showing others even their size and timing.
    Any failure (it exists, the folder is read-only) is left for SQLite to meet and report as
    it always has."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


def _is_new(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def _check_file(path: Path) -> None:
    """Rules 2 and 3: what the bytes on disk say before any key is tried."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    if size == 0:
        return
    if header == SQLITE_HEADER:
        raise plaintext_error(path)
    if size < PAGE_SIZE or size % PAGE_SIZE:
        raise _Damaged(f"{size} bytes is not a whole number of {PAGE_SIZE}-byte pages: truncated")


def plaintext_error(path: Path) -> PlaintextDatabaseError:
    return PlaintextDatabaseError(
        f"{path} is an unencrypted SQLite database where capy expects an encrypted one; "
        "run `capy encrypt` to encrypt it in place (a backup is kept)"
    )


def _check_key(conn: sqlcipher3.Connection, path: Path, key: DatabaseKey) -> None:
    """Rule 4: reading the schema decrypts page 1, which proves the key (or finds damage)."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except DatabaseError as error:
        if not _is_not_a_database(error):
            raise
        if read_key_check(path) == key.fingerprint():
            raise _Damaged("page 1 fails its integrity check, yet the key is right") from None
        raise wrong_key_error(path, key) from None


def wrong_key_error(path: Path, key: DatabaseKey) -> WrongKeyError:
    source = key.source
    if source.is_key_file:
        way_out = f"restore the key file it was created with, or set {source.env_var} to that key"
    else:
        way_out = f"set {source.env_var} to the key it was created with"
    return WrongKeyError(
        f"{path} is encrypted with a different key than the one from {source.label}; nothing was "
        f"changed: {way_out}, or move the file away to start a new database"
    )


def _configure(conn: sqlcipher3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    # WAL lets readers run while one writer writes; it is stored in the file, so set it once.
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        _retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
    # NORMAL is durable across application crashes in WAL mode; only power loss can drop the
    # last commits, and it saves an fsync per transaction.
    conn.execute("PRAGMA synchronous = NORMAL")


def _quick_check(conn: sqlcipher3.Connection) -> None:
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except (DatabaseError, MemoryError):
        # The key is proven by now; SQLCipher reports a later page failing its HMAC as
        # "SQL logic error" or out-of-memory rather than as corruption.
        raise _Damaged("quick_check could not decrypt a page") from None
    if rows != [("ok",)]:
        raise _Damaged(f"quick_check: {rows[0][0]}")


def is_corruption(error: Exception) -> bool:
    name = getattr(error, "sqlite_errorname", "") or ""
    return name.startswith("SQLITE_CORRUPT") or _is_not_a_database(error)


def _is_not_a_database(error: Exception) -> bool:
    name = getattr(error, "sqlite_errorname", "") or ""
    return name.startswith("SQLITE_NOTADB") or "file is not a database" in str(error)


def _is_busy(error: Exception) -> bool:
    name = getattr(error, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(error)


def _retry_busy(action: Callable[[], object], deadline_s: float = WRITE_LOCK_DEADLINE_S) -> None:
    """Run `action`, retrying on SQLITE_BUSY with jittered backoff until the deadline.

    The busy timeout alone is not enough: in WAL mode SQLite returns BUSY at once in some cases
    (a WAL being recovered, a lock held while another process switches journal mode).
    """
    deadline = time.monotonic() + deadline_s
    delay = 0.005
    while True:
        try:
            action()
            return
        except sqlcipher3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() >= deadline:
                raise
        import random

        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.25)


@contextlib.contextmanager
def transaction(conn: sqlcipher3.Connection) -> Iterator[sqlcipher3.Connection]:
    """A write transaction: BEGIN IMMEDIATE takes the write lock up front, so a writer never
    fails half-way on lock upgrade; it commits on success and rolls back on any exception."""
    _retry_busy(lambda: conn.execute("BEGIN IMMEDIATE"))
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    _retry_busy(lambda: conn.execute("COMMIT"))


@contextlib.contextmanager
def read_snapshot(conn: sqlcipher3.Connection) -> Iterator[sqlcipher3.Connection]:
    """Several reads that see one committed state (WAL keeps it while a writer commits); inside
    a caller's transaction they simply join it."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")  # a read-only transaction: this only ends the snapshot


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on `<db>.lock`, for creating, recovering and swapping files."""
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def key_check_path(path: Path) -> Path:
    return path.with_name(path.name + ".keycheck")


def read_key_check(path: Path) -> str | None:
    try:
        return key_check_path(path).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def write_key_check(path: Path, key: DatabaseKey) -> None:
    """Record which key opened this file, so a later page-1 failure can be judged (rule 4)."""
    fingerprint = key.fingerprint()
    if read_key_check(path) == fingerprint:
        return
    write_atomically(key_check_path(path), fingerprint.encode() + b"\n")


def utc_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


def quarantine(path: Path, label: str = "corrupt") -> Path:
    """Move the database and its -wal/-shm aside as `<name>.<label>-<UTC stamp>`; return it."""
    moved = path.with_name(f"{path.name}.{label}-{utc_stamp()}")
    # -wal/-shm first: a stray WAL beside a fresh database would be replayed into it.
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{path}{suffix}", f"{moved}{suffix}")
    os.rename(path, moved)
    return moved
