"""The knowledge base: one encrypted SQLite (SQLCipher) file per project.

Typical use::

    from capy.store import open_store, transaction

    with open_store() as store:
        with transaction(store.conn):
            store.conn.execute("INSERT INTO sources ...")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import sqlcipher3

from capy.store.database import (
    Notify,
    connect,
    is_plaintext,
    open_database,
    plaintext_error,
    stderr_notice,
    transaction,
)
from capy.store.errors import (
    CorruptDatabaseError,
    EncryptError,
    KeyFileError,
    PlaintextDatabaseError,
    StoreError,
    WrongKeyError,
)
from capy.store.keys import DatabaseKey, KeySource, key_source, load_key
from capy.store.location import StoreLocation, locate_store, resolve_db_path
from capy.store.migrations import MIGRATIONS, chunk_rowid, chunk_rowid_range, migrate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Self


@dataclass
class Store:
    """An open knowledge database: its connection, and where it and its key live."""

    conn: sqlcipher3.Connection
    location: StoreLocation
    key: DatabaseKey

    @property
    def path(self) -> Path:
        return self.location.path

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def open_store(
    project_dir: Path | None = None,
    *,
    db_path: Path | None = None,
    verify: bool = False,
    notify: Notify = stderr_notice,
) -> Store:
    """Open the project's knowledge base, creating the key and the file on first use.

    Raises `ConfigError` (bad settings) or a `StoreError` subclass, each with a `.message`.
    """
    return open_located(locate_store(project_dir, db_path), verify=verify, notify=notify)


def open_located(
    location: StoreLocation, *, verify: bool = False, notify: Notify = stderr_notice
) -> Store:
    """`open_store` for a location already resolved (a long-lived process or a warm CLI start
    knows it already)."""
    from capy.store.failures import explained_failures

    with explained_failures(location.path):  # a folder, a read-only or full disk, damage
        if location.path.is_file() and is_plaintext(location.path):
            raise plaintext_error(location.path)  # before a key file is generated for nothing
        refuse_missing_key_file(location)
        key = load_key(location.key_source)
        conn = open_database(location.path, key, verify=verify, notify=notify)
    return Store(conn=conn, location=location, key=key)


def refuse_missing_key_file(location: StoreLocation) -> None:
    """A key file is generated for a new database only: generating one for an existing file
    would just produce a wrong key, and hide that the real one was lost."""
    source, path = location.key_source, location.path
    if source.key_file is None or source.key_file.exists():
        return
    try:
        exists = path.stat().st_size > 0
    except FileNotFoundError:
        exists = False
    if exists and not is_plaintext(path):
        raise KeyFileError(
            f"{path} exists but its key file {source.key_file} is missing; restore the key file "
            f"from a backup, or set {source.env_var} to the key the database was created with"
        )


__all__ = [
    "MIGRATIONS",
    "CorruptDatabaseError",
    "DatabaseKey",
    "EncryptError",
    "KeyFileError",
    "KeySource",
    "PlaintextDatabaseError",
    "Store",
    "StoreError",
    "StoreLocation",
    "WrongKeyError",
    "chunk_rowid",
    "chunk_rowid_range",
    "connect",
    "key_source",
    "load_key",
    "locate_store",
    "migrate",
    "open_database",
    "open_located",
    "open_store",
    "refuse_missing_key_file",
    "resolve_db_path",
    "transaction",
]
