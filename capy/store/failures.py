"""What the machine can do to a database under capy: a folder where the file should be, a
read-only or full disk, a damaged page. Each becomes one sentence and what to do, at the place
where capy opens or uses a store, instead of an "internal error".

SQLite reports these through its result codes (`sqlite_errorname`), the OS through `errno`;
both are mapped here, once, for the knowledge base and the vault alike.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from pathlib import Path

import sqlcipher3

from capy.store.errors import StoreError

KNOWLEDGE_SETTING = "--db or CAPY_DB_PATH"
VAULT_SETTING = "--path or CAPY_VAULT_PATH"
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_NOT_A_FOLDER_ERRNOS = {errno.ENOTDIR, errno.EEXIST}


class StoreUnavailableError(StoreError):
    """The store's file or folder cannot be used as it is (a folder, read-only, full, damaged)."""


@contextlib.contextmanager
def explained_failures(
    path: Path, *, what: str = "the knowledge base", setting: str = KNOWLEDGE_SETTING
) -> Iterator[None]:
    """Re-raise the failures `explain_failure` knows as its `StoreUnavailableError`."""
    try:
        yield
    except StoreError:
        raise
    except Exception as error:
        explained = explain_failure(error, path, what=what, setting=setting)
        if explained is None:
            raise
        raise explained from None


def explain_failure(
    error: BaseException,
    path: Path | None,
    *,
    what: str = "the knowledge base",
    setting: str = KNOWLEDGE_SETTING,
) -> StoreUnavailableError | None:
    """One sentence for an OS or SQLite failure of the store at `path`, or None if not one."""
    name = str(getattr(error, "sqlite_errorname", "") or "")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(error):
        return None  # another process holds the lock: the callers' own retry and message
    where = f"{what} at {path}" if path is not None else what
    if isinstance(error, IsADirectoryError) or (path is not None and path.is_dir()):
        target = path if path is not None else Path(getattr(error, "filename", "") or ".")
        return StoreUnavailableError(
            f"{target} is a folder, not a database file; give {setting} the path of a file, "
            f"such as {target / 'knowledge.db'}"
        )
    if _errno(error) in _NOT_A_FOLDER_ERRNOS:
        # mkdir of the store's folder met a file on the way (a data dir set to a file's path)
        return StoreUnavailableError(
            f"cannot create {where}: {getattr(error, 'filename', None) or 'a part of its path'} "
            f"runs through a file where a folder should be; move that file aside, or point "
            f"{setting} (or CAPY_DATA_DIR) at a folder"
        )
    if name.startswith("SQLITE_FULL") or _errno(error) in _FULL_ERRNOS:
        return StoreUnavailableError(
            f"the disk holding {where} is full, so nothing was written; free some space "
            "(`capy cleanup --apply` removes expired sources) and try again"
        )
    if name.startswith("SQLITE_READONLY") or _errno(error) in _DENIED_ERRNOS:
        if _inside_a_call():
            return StoreUnavailableError(
                f"cannot open {where}: capy's keys and stores are hidden from code that runs "
                "inside a capy sandbox call; run this capy command outside the sandbox"
            )
        place = getattr(error, "filename", None) or (path.parent if path is not None else None)
        return StoreUnavailableError(
            f"cannot write {where}: {place or 'its folder'} is read-only or not writable by "
            f"this user; make it writable, or point {setting} (and CAPY_KEY_DIR for the key) "
            "at a writable place"
        )
    if name.startswith("SQLITE_CANTOPEN"):
        return StoreUnavailableError(
            f"cannot open {where}: its folder is missing, not a folder, or not writable; check "
            "the path and its permissions"
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return StoreUnavailableError(
            f"{where} is damaged (SQLite: {error}); move the file aside (capy starts a new one "
            "on the next run) and index the sources again, or restore it from a backup"
        )
    if name.startswith("SQLITE_IOERR") or _errno(error) == errno.EIO:
        return StoreUnavailableError(
            f"reading or writing {where} failed with a disk I/O error; check the disk and the "
            "free space, then try again"
        )
    if isinstance(error, sqlcipher3.DatabaseError):
        # SQLite's generic codes (a damaged FTS page reads as "SQL logic error") cannot tell
        # damage from anything else: send the person to the check that can.
        return StoreUnavailableError(
            f"{where} failed a database operation (SQLite: {error}); run `capy doctor` to check "
            "it for damage, and if it is damaged move the file aside and index the sources again"
        )
    return None


def _inside_a_call() -> bool:
    """Whether this process runs inside a capy sandbox call (its marker is set): the call's
    mounts hide capy's key and data folders behind empty read-only ones."""
    import os

    from capy.executor.processes import MARKER_ENV

    return MARKER_ENV in os.environ


def _errno(error: BaseException) -> int | None:
    return error.errno if isinstance(error, OSError) else None
