"""Open knowledge-base connections kept for a long-lived process (the MCP server) and reused.

Opening a store per tool call costs a settings read, a SQLCipher open with its first page
decrypted, a cold page cache, and a WAL checkpoint when the last connection closes. A pool
keeps a few open connections instead: a call takes an idle one (or opens one when all are
busy), and gives it back when done, so its page cache and prepared statements stay warm.

What a fresh open used to guarantee is checked on every checkout, with a few `stat` calls:
- the settings that place the store are read again only when one of their files changed;
- a database file deleted, replaced (key rotation, `capy encrypt`) or a key file rewritten
  underneath the server makes the pool drop every connection it holds and open the file
  anew, so a call never reads or writes an unlinked file, and a wrong key reads as one
  sentence (`WrongKeyError`) like any open;
- a connection handed back inside a transaction is rolled back, and one that failed with a
  database error is closed rather than reused.
Concurrency with other processes (hooks, the CLI) is unchanged: every connection is an
ordinary WAL connection, and writers take `BEGIN IMMEDIATE` as before.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.store.database import DatabaseError, Notify, stderr_notice

if TYPE_CHECKING:
    from capy.store import Store, StoreLocation


@dataclass(frozen=True)
class _Located:
    """Where the store is, and the files and environment that answer depended on."""

    location: StoreLocation
    watch: list[list[Any]]
    environment: list[list[str]]


class StorePool:
    """Reusable open stores for one project; `close()` ends them all (at server exit)."""

    what = "the knowledge base"  # the database, as an error names it

    def __init__(
        self, project_dir: Path, db_path: Path | None = None, *, notify: Notify = stderr_notice
    ) -> None:
        self._project_dir = project_dir
        self._db_path = db_path
        self._notify = notify
        self._lock = threading.Lock()
        self._idle: list[Store] = []
        # Every connection opened and not yet closed, with the identity of the files it opened.
        self._open: dict[int, tuple[Store, tuple[Any, ...]]] = {}
        self._located: _Located | None = None
        self._identity: tuple[Any, ...] | None = None  # of the files the open stores use
        self._closed = False

    @contextlib.contextmanager
    def checkout(self) -> Iterator[Store]:
        """An open store for this call alone; given back (or closed, if it failed) at the end."""
        store = self._take()
        healthy = True
        try:
            yield store
        except DatabaseError:
            healthy = False  # damage, a re-keyed file: the next call opens afresh
            raise
        finally:
            self._give_back(store, healthy)

    def close(self) -> None:
        """Close every connection, idle or not; later checkouts open nothing."""
        with self._lock:
            self._closed = True
            stores = [store for store, _ in self._open.values()]
            self._open, self._idle = {}, []
        for store in stores:
            with contextlib.suppress(Exception):  # closing must reach every connection
                store.close()

    def idle_stores(self) -> int:
        with self._lock:
            return len(self._idle)

    def _take(self) -> Store:
        from capy.store import StoreError

        located = self._location()
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.what} is closed: the server is shutting down")
        self._drop_stale(_identity(located.location))
        with self._lock:
            if self._idle:
                return self._idle.pop()
        store = self._open_store(located.location)
        # Opening may have created the file or its key: what it opened is the identity now.
        identity = _identity(located.location)
        self._drop_stale(identity)
        with self._lock:
            self._open[id(store)] = (store, identity)
        return store

    def _drop_stale(self, identity: tuple[Any, ...]) -> None:
        """Close the idle connections when the files changed since they were opened."""
        with self._lock:
            if identity == self._identity:
                return
            stale, self._idle = self._idle, []
            self._identity = identity
        for old in stale:
            self._forget(old)

    def _give_back(self, store: Store, healthy: bool) -> None:
        conn = store.conn
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")  # an idle connection must pin no snapshot
        except Exception:
            healthy = False
        with self._lock:
            opened = self._open.get(id(store))
            # A connection opened on files since replaced is closed, even if no call noticed.
            current = healthy and opened is not None and opened[1] == self._identity
            if current:
                self._idle.append(store)
        if not current:
            self._forget(store)

    def _forget(self, store: Store) -> None:
        with self._lock:
            self._open.pop(id(store), None)
        with contextlib.suppress(Exception):
            store.close()

    def _open_store(self, location: StoreLocation) -> Store:
        from capy.store import open_located

        return open_located(location, notify=self._notify)

    def _locate(self) -> Any:
        """Where the database and its key are now (a subclass pools another database)."""
        from capy.store import locate_store

        return locate_store(self._project_dir, self._db_path)

    def _location(self) -> _Located:
        """The store's location, read again only when a settings file or the environment
        changed (the same test the on-disk caches use)."""
        from capy import watched

        located = self._located
        environment = watched.environment()
        if (
            located is not None
            and located.environment == environment
            and watched.is_fresh(located.watch)
        ):
            return located
        watch = watched.watch_list(watched.config_inputs(self._project_dir))
        location = self._locate()
        located = _Located(location, watch, environment)
        self._located = located
        return located


def _identity(location: StoreLocation) -> tuple[Any, ...]:
    """What says the open connections still use the files a fresh open would use."""
    key_file = location.key_source.key_file
    # The database changes on every write, so only a replaced file (a new inode) or a missing
    # one counts; a key file changes only when rotated, so a rewrite in place counts too.
    database = _file_status(location.path)
    key = _file_status(key_file) if key_file is not None else None
    return (
        database and (database.st_dev, database.st_ino),
        key and (key.st_dev, key.st_ino, key.st_mtime_ns, key.st_size),
    )


def _file_status(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None
