"""Throwaway encrypted stores for benchmarks: a temp directory, a random key held in memory.

A benchmark must never read or write the user's knowledge base, key file or config, so the store
is opened from its parts (no settings, no key file) rather than through `open_store`.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capy.store import DatabaseKey, KeySource, Store, StoreLocation, open_database
from capy.store.keys import KEY_BYTES


def _silent(_message: str) -> None:
    """A fresh temp file is never damaged; nothing worth saying to the person running a bench."""


def scratch_key() -> DatabaseKey:
    source = KeySource(name="db", label="a throwaway benchmark key")
    return DatabaseKey(secrets.token_bytes(KEY_BYTES), source)


@contextmanager
def scratch_directory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="capy-bench-") as name:
        yield Path(name)


def open_scratch_store(directory: Path, name: str = "knowledge.db") -> Store:
    """A new encrypted, migrated store under `directory` (which the caller removes)."""
    key = scratch_key()
    path = directory / name
    conn = open_database(path, key, notify=_silent)
    location = StoreLocation(path=path, project_root=directory, key_source=key.source)
    return Store(conn=conn, location=location, key=key)


@contextmanager
def scratch_store() -> Iterator[Store]:
    with scratch_directory() as directory, open_scratch_store(directory) as store:
        yield store
