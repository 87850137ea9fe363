"""`capy which | checkpoint | dbsize | encrypt`: thin shells over `capy.store`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from cyclopts import Parameter

from capy.cli.guard import guarded as guarded
from capy.cli.output import say
from capy.units import human_bytes

# `CAPY_DB_PATH` is read by the settings (relative to the project root); `--db` overrides it and,
# like any path typed on a command line, is relative to the current directory.
DbOption = Annotated[
    Path | None,
    Parameter(name="--db", help="Database file to use instead of the project's (CAPY_DB_PATH)."),
]
JsonFlag = Annotated[bool, Parameter(name="--json", negative=(), help="Print JSON.")]


def which(*, db: DbOption = None, as_json: JsonFlag = False) -> int:
    """Print the path of this project's knowledge database.

    Parameters
    ----------
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print the path, project root, key source and whether the file exists, as JSON.
    """

    def run() -> int:
        from capy.cli.output import print_json
        from capy.store import locate_store

        location = locate_store(db_path=db)
        if not as_json:
            say(location.path)
            return 0
        print_json(
            {
                "path": str(location.path),
                "project_root": str(location.project_root),
                "key_source": location.key_source.label,
                "exists": location.path.is_file(),
            }
        )
        return 0

    return guarded(run)


def checkpoint(*, db: DbOption = None) -> int:
    """Copy the write-ahead log into the database file and truncate it.

    Parameters
    ----------
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    """

    def run() -> int:
        from capy.store import open_store
        from capy.store.maintenance import checkpoint as run_checkpoint

        with open_store(db_path=db) as store:
            result = run_checkpoint(store.conn)
        say(f"checkpointed {result.checkpointed} of {result.wal_frames} WAL frames")
        if not result.truncated:
            say("the WAL was not truncated: another process is reading; run it again later")
        return 0

    return guarded(run)


def dbsize(*, db: DbOption = None, as_json: JsonFlag = False) -> int:
    """Show the size of the database, its WAL and SHM files, and of each table.

    Parameters
    ----------
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print JSON instead of a table.
    """

    def run() -> int:
        from dataclasses import asdict

        from capy.cli.output import print_json
        from capy.store import open_store
        from capy.store.maintenance import database_sizes

        with open_store(db_path=db) as store:
            report = database_sizes(store.conn, store.path)
        if as_json:
            print_json(asdict(report))
        else:
            _print_sizes(report)
        return 0

    return guarded(run)


def _print_sizes(report: Any) -> None:
    from capy.cli.output import say
    from capy.cli.tables import Table, print_table

    say(report.path)
    say(
        f"file {human_bytes(report.file_bytes)}, WAL {human_bytes(report.wal_bytes)}, "
        f"SHM {human_bytes(report.shm_bytes)}; "
        f"{report.page_count} pages of {report.page_size} bytes, {report.freelist_pages} free"
    )
    what = "pages used" if report.method == "dbstat" else "stored data (no dbstat in this build)"
    rows = [[entry.name, str(entry.rows), human_bytes(entry.bytes)] for entry in report.tables]
    print_table(Table(("table", "rows", what), rows, frozenset({1, 2})))


def encrypt(
    *,
    db: DbOption = None,
    new_key_file: Annotated[Path | None, Parameter(name="--new-key-file")] = None,
    rotate: Annotated[bool, Parameter(name="--rotate", negative=())] = False,
) -> int:
    """Encrypt a plaintext database, or rotate an encrypted one to a new key.

    The database is copied with sqlcipher_export, verified (integrity and row counts) and swapped
    in atomically; the previous file is kept beside it as a timestamped backup. Stop capy's MCP
    server and agents first: the database must not be open elsewhere.

    Parameters
    ----------
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    new_key_file
        Rotate to the key in this file (64 hex digits, or a passphrase); CAPY_NEW_DB_KEY works
        too.
    rotate
        Rotate the key kept in capy's key file to a fresh random key.
    """

    def run() -> int:
        from capy.store import locate_store
        from capy.store.maintenance import encrypt_store

        text, label = _new_key_text(new_key_file)
        outcome = encrypt_store(locate_store(db_path=db), text, label, generate=rotate)
        _print_outcome(outcome)
        return 0

    return guarded(run)


def read_small_text(path: Path) -> str:
    from capy.userfiles import SMALL_FILE_BYTES, read_user_file

    return read_user_file(path, limit=SMALL_FILE_BYTES, purpose="read").head.decode("utf-8")


def _new_key_text(path: Path | None) -> tuple[str | None, str]:
    from capy.store import KeyFileError

    if path is not None:
        try:
            return read_small_text(path), f"key file {path}"
        except (OSError, UnicodeDecodeError) as error:
            raise KeyFileError(f"cannot read the new key file {path} ({error})") from None
    if os.environ.get("CAPY_NEW_DB_KEY", "").strip():
        return os.environ["CAPY_NEW_DB_KEY"], "CAPY_NEW_DB_KEY"
    return None, ""


def _print_outcome(outcome: Any) -> None:
    result = outcome.result
    tables = ", ".join(f"{name} {count}" for name, count in result.row_counts.items())
    done = "encrypted" if result.was_plaintext else "re-encrypted with the new key"
    say(f"{result.path}: {done}; rows verified ({tables})")
    if result.was_plaintext:
        say(f"the unencrypted original is at {result.backup}; delete it once you are satisfied")
    else:
        say(f"the previous file is at {result.backup}; it still opens with the old key")
    if outcome.key_file is not None:
        say(f"the key file {outcome.key_file} now holds the new key")
        say(f"the old key is kept in {outcome.old_key_backup} (it opens the backup)")
    if outcome.set_env_var:
        say(f"now set {outcome.set_env_var} to the new key; the old value opens the backup only")
