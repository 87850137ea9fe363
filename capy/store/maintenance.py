"""Keeping a knowledge database in shape: WAL checkpoints, sizes, encryption and key rotation."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import sqlcipher3

from capy.store.database import (
    DatabaseError,
    connect,
    create_private,
    file_lock,
    is_plaintext,
    utc_stamp,
    write_key_check,
    wrong_key_error,
)
from capy.store.errors import EncryptError
from capy.store.keys import (
    KEY_BYTES,
    DatabaseKey,
    KeySource,
    key_from_text,
    load_key,
    write_key_file,
)
from capy.store.location import StoreLocation

# FTS5 keeps a virtual table's data in shadow tables named `<table>_<suffix>`.
_FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")


@dataclass(frozen=True)
class CheckpointResult:
    wal_frames: int  # frames in the WAL before the checkpoint
    checkpointed: int  # of those, frames copied into the database file
    truncated: bool  # False: another connection was reading, the WAL could not be emptied


def checkpoint(conn: sqlcipher3.Connection) -> CheckpointResult:
    """Copy the WAL into the database file and truncate it to zero bytes when nobody reads."""
    # TRUNCATE reports zeros once it succeeds, so a PASSIVE pass first counts the frames.
    _, frames, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return CheckpointResult(max(frames, 0), max(done, 0), truncated=not busy)


@dataclass(frozen=True)
class TableSize:
    name: str
    rows: int
    bytes: int  # dbstat: bytes of pages used; otherwise the payload estimate
    pages: int | None  # only known with dbstat


@dataclass(frozen=True)
class SizeReport:
    path: Path
    file_bytes: int
    wal_bytes: int
    shm_bytes: int
    page_size: int
    page_count: int
    freelist_pages: int
    method: str  # "dbstat", or "payload" (sum of stored values) when SQLCipher lacks dbstat
    tables: list[TableSize] = field(default_factory=list)


def database_sizes(conn: sqlcipher3.Connection, path: Path) -> SizeReport:
    """File, WAL and SHM sizes, and per-table sizes (FTS shadow tables counted with their table)."""
    pragma = lambda name: conn.execute(f"PRAGMA {name}").fetchone()[0]  # noqa: E731
    owners = _table_owners(conn)
    try:
        tables, method = _dbstat_sizes(conn, owners), "dbstat"
    except DatabaseError:  # this SQLCipher build was compiled without SQLITE_ENABLE_DBSTAT_VTAB
        tables, method = _payload_sizes(conn, owners), "payload"
    return SizeReport(
        path=path,
        file_bytes=_size(path),
        wal_bytes=_size(Path(f"{path}-wal")),
        shm_bytes=_size(Path(f"{path}-shm")),
        page_size=int(pragma("page_size")),
        page_count=int(pragma("page_count")),
        freelist_pages=int(pragma("freelist_count")),
        method=method,
        tables=tables,
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _table_owners(conn: sqlcipher3.Connection) -> dict[str, str]:
    """Every stored table and index, mapped to the table a person knows it by."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    virtual = {name for kind, name, _, sql in rows if kind == "table" and _is_virtual(sql)}
    owners = {}
    for kind, name, table, sql in rows:
        if kind not in ("table", "index") or (kind == "table" and _is_virtual(sql)):
            continue
        owner = table
        for fts in virtual:
            if any(table == f"{fts}_{suffix}" for suffix in _FTS5_SHADOWS):
                owner = fts
        owners[name] = owner
    return owners


def _is_virtual(sql: str | None) -> bool:
    return bool(sql) and sql.upper().startswith("CREATE VIRTUAL TABLE")


def _dbstat_sizes(conn: sqlcipher3.Connection, owners: dict[str, str]) -> list[TableSize]:
    pages: dict[str, list[int]] = {}
    for name, count, size in conn.execute(
        "SELECT name, count(*), sum(pgsize) FROM dbstat GROUP BY name"
    ):
        total = pages.setdefault(owners.get(name, name), [0, 0])
        total[0] += count
        total[1] += size
    return [
        TableSize(name, _row_count(conn, name), size, count)
        for name, (count, size) in sorted(pages.items())
        if not name.startswith("sqlite_")
    ]


def _payload_sizes(conn: sqlcipher3.Connection, owners: dict[str, str]) -> list[TableSize]:
    totals: dict[str, int] = {}
    for name, owner in owners.items():
        if name.startswith("sqlite_") or owner != owners.get(owner, owner):
            continue
        is_table = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        if is_table:
            totals[owner] = totals.get(owner, 0) + _payload(conn, name)
    return [
        TableSize(name, _row_count(conn, name), size, None) for name, size in sorted(totals.items())
    ]


def _payload(conn: sqlcipher3.Connection, table: str) -> int:
    columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
    if not columns:
        return 0
    lengths = " + ".join(f'coalesce(length(CAST("{column}" AS BLOB)), 0)' for column in columns)
    return conn.execute(f'SELECT coalesce(sum({lengths}), 0) FROM "{table}"').fetchone()[0]


def _row_count(conn: sqlcipher3.Connection, table: str) -> int:
    return conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]


def row_counts(conn: sqlcipher3.Connection) -> dict[str, int]:
    """Rows per table as a person sees them (virtual tables included, FTS shadows left out)."""
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    virtual = {name for name in names if _is_virtual(_table_sql(conn, name))}
    shadows = {f"{fts}_{suffix}" for fts in virtual for suffix in _FTS5_SHADOWS}
    return {name: _row_count(conn, name) for name in names if name not in shadows}


def _table_sql(conn: sqlcipher3.Connection, name: str) -> str | None:
    return conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]


@dataclass(frozen=True)
class EncryptResult:
    path: Path
    backup: Path  # the previous file, untouched, opens as it did before (plaintext or old key)
    was_plaintext: bool
    row_counts: dict[str, int]


def encrypt_database(
    path: Path,
    old_key: DatabaseKey | None,
    new_key: DatabaseKey,
    *,
    command: str = "capy encrypt",
) -> EncryptResult:
    """Re-encrypt `path` under `new_key` (from plaintext when `old_key` is None).

    `sqlcipher_export` writes a copy (the backup API cannot cross between plain and encrypted
    files); the copy must pass `integrity_check` and match every table's row count before it is
    renamed over the original, whose hard link stays behind as `<name>.backup-<UTC stamp>`.
    The write lock is held throughout, so no commit can land in the old file unseen.
    """
    if not path.is_file():
        raise EncryptError(f"there is no database at {path}; nothing to encrypt")
    with file_lock(path):
        source = _open_source(path, old_key, command)
        try:
            return _export_and_swap(source, path, old_key is None, new_key)
        finally:
            source.close()


def _open_source(path: Path, old_key: DatabaseKey | None, command: str) -> sqlcipher3.Connection:
    source = connect(path, old_key)
    try:
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except DatabaseError:
        source.close()
        if old_key is None:
            raise EncryptError(f"{path} is not a readable SQLite database") from None
        raise wrong_key_error(path, old_key) from None
    # Leaving WAL mode needs every other connection closed, which is what makes the swap safe:
    # the old file's -wal/-shm are gone, and no other process holds the old file open to write
    # into it after the rename. The new file is put back in WAL mode before the swap.
    try:
        mode = source.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
    except DatabaseError:
        mode = "busy"
    if mode.lower() != "delete":
        source.close()
        raise EncryptError(
            f"{path} is in use by another process (an MCP server or agent hook); stop it and "
            f"run `{command}` again"
        )
    return source


def _export_and_swap(
    source: sqlcipher3.Connection, path: Path, was_plaintext: bool, new_key: DatabaseKey
) -> EncryptResult:
    stamp = utc_stamp()
    copy = path.with_name(f"{path.name}.encrypting-{stamp}")
    # The copy takes the original's place: private to its owner, as capy makes every store.
    create_private(copy)
    source.execute("ATTACH DATABASE ? AS capy_export KEY ?", (str(copy), f"x'{new_key.raw.hex()}'"))
    try:
        source.execute("BEGIN IMMEDIATE")
        source.execute("SELECT sqlcipher_export('capy_export')").fetchall()
        expected = row_counts(source)
        version = source.execute("PRAGMA data_version").fetchone()[0]
        # The copy is part of this transaction until it commits; DETACH needs it closed.
        source.execute("COMMIT")
        source.execute("DETACH DATABASE capy_export")
        # Writers are held off again while the copy is checked and swapped in; data_version
        # tells whether another connection committed in the moment between.
        source.execute("BEGIN IMMEDIATE")
        if source.execute("PRAGMA data_version").fetchone()[0] != version:
            raise EncryptError(f"{path} was written to during the export; run it again")
        _verify_copy(copy, new_key, expected)
        backup = path.with_name(f"{path.name}.backup-{stamp}")
        os.link(path, backup)  # the original stays reachable under its backup name
        os.replace(copy, path)  # atomic: openers see the old file or the new one, never neither
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            copy.unlink()
        raise
    finally:
        if source.in_transaction:
            source.execute("ROLLBACK")
    _verify_swapped(path, new_key, backup, expected)
    write_key_check(path, new_key)
    return EncryptResult(path, backup, was_plaintext, expected)


def _verify_copy(copy: Path, key: DatabaseKey, expected: dict[str, int]) -> None:
    conn = connect(copy, key)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchall()
        counts = row_counts(conn)
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
    except (DatabaseError, MemoryError) as error:
        raise EncryptError(
            f"the re-encrypted copy does not open ({error}); the original is intact"
        ) from None
    finally:
        conn.close()
    if result != [("ok",)]:
        raise EncryptError(
            f"the re-encrypted copy fails integrity_check ({result[0][0]}); the original is intact"
        )
    if counts != expected:
        raise EncryptError("the re-encrypted copy lost rows; the original is intact")


def _verify_swapped(path: Path, key: DatabaseKey, backup: Path, expected: dict[str, int]) -> None:
    try:
        _verify_copy(path, key, expected)
    except EncryptError as error:
        os.replace(backup, path)
        raise EncryptError(
            f"{error.message.split(';')[0]} after the swap; the original was put back"
        ) from None


@dataclass(frozen=True)
class RekeyOutcome:
    result: EncryptResult
    key_file: Path | None  # the managed key file, now holding the new key
    old_key_backup: Path | None  # a copy of the previous key file: it opens `result.backup`
    set_env_var: str | None  # the variable a person must now set to the new key


def encrypt_store(
    location: StoreLocation,
    new_key_text: str | None = None,
    new_key_label: str = "",
    *,
    generate: bool = False,
    command: str = "capy encrypt",
) -> RekeyOutcome:
    """`capy encrypt`: encrypt a plaintext database with the configured key, or rotate the key.

    Rotating takes the new key from `new_key_text` or, with `generate` and a key that lives in
    the managed key file, generates one. The new key is written to `<key file>.next` before the
    swap and moved over the key file after it, so the only copy of a key is never in memory.
    `command` is what messages tell a person to run again (the vault passes its own).
    """
    path, source = location.path, location.key_source
    if not path.is_file():
        raise EncryptError(f"there is no database at {path}; nothing to encrypt")
    if is_plaintext(path):
        if new_key_text is not None:
            raise EncryptError(
                f"{path} is not encrypted yet, so there is no key to rotate; run `capy encrypt` "
                "without a new key to encrypt it with the configured one"
            )
        result = encrypt_database(path, None, load_key(source), command=command)
        return RekeyOutcome(result, None, None, None)
    old = load_key(source)
    new = _new_key(source, new_key_text, new_key_label, generate)
    if new.raw == old.raw:
        raise EncryptError("the new key is the same as the current one; nothing to do")
    if source.key_file is None:
        result = encrypt_database(path, old, new, command=command)
        return RekeyOutcome(result, None, None, source.env_var)
    pending = source.key_file.with_name(source.key_file.name + ".next")
    write_key_file(pending, new.raw, replace=True)
    try:
        result = encrypt_database(path, old, new, command=command)
    except BaseException:
        pending.unlink(missing_ok=True)
        raise
    stamp = result.backup.name.rsplit("backup-", 1)[1]
    key_backup = source.key_file.with_name(f"{source.key_file.name}.backup-{stamp}")
    os.link(source.key_file, key_backup)
    os.replace(pending, source.key_file)
    return RekeyOutcome(result, source.key_file, key_backup, None)


def new_key_env_var(name: str) -> str:
    """The variable that gives a rotation its new key: CAPY_NEW_DB_KEY, CAPY_NEW_VAULT_KEY."""
    return f"CAPY_NEW_{name.upper()}_KEY"


def _new_key(source: KeySource, text: str | None, label: str, generate: bool) -> DatabaseKey:
    target = KeySource(name=source.name, label=label or "a generated key")
    if text is not None:
        return DatabaseKey(key_from_text(text, source.name), target)
    if not generate:
        raise EncryptError(
            f"the database is already encrypted with the key from {source.label}; to rotate it, "
            "pass --rotate for a fresh random key, or give one with --new-key-file or "
            f"{new_key_env_var(source.name)}"
        )
    if source.key_file is None:
        raise EncryptError(
            f"--rotate generates a key only for capy's key file, but the key comes from "
            f"{source.label}; give the new key with --new-key-file or "
            f"{new_key_env_var(source.name)}"
        )
    import secrets

    return DatabaseKey(secrets.token_bytes(KEY_BYTES), target)
