"""The knowledge base: does it open with its key, pass `quick_check`, and is it up to date.

Read-only on purpose: the doctor never creates a database or a key file, never migrates, and
never moves a damaged file aside (opening through the store would do all three).
"""

from __future__ import annotations

from capy.doctor.context import DoctorContext
from capy.doctor.report import Check, Status

GROUP = "Knowledge base"
NAME = "knowledge base"


def knowledge_base(ctx: DoctorContext) -> list[Check]:
    from capy.store import KeyFileError, StoreError, locate_store
    from capy.store.maintenance import is_plaintext

    location = locate_store(ctx.project_dir)
    path = location.path
    shown = ctx.shown(path)
    if not path.is_file():
        return [Check(GROUP, NAME, Status.OK, f"none yet at {shown}; capy creates it on first use")]
    if is_plaintext(path):
        return [
            Check(
                GROUP,
                NAME,
                Status.WARN,
                f"{shown} is not encrypted",
                "run `capy encrypt` to encrypt it with the configured key",
            )
        ]
    try:
        key = _existing_key(location)
    except (KeyFileError, StoreError) as error:
        return [Check(GROUP, NAME, Status.FAIL, error.message, "see the message for what to do")]
    return [_inspect(ctx, path, shown, key)]


def _existing_key(location):
    """The configured key, without creating a key file that does not exist."""
    from capy.store import DatabaseKey, KeyFileError
    from capy.store.keys import key_from_text, read_key_file

    source = location.key_source
    if source.secret is not None:
        return DatabaseKey(key_from_text(source.secret.get_secret_value(), source.name), source)
    if not source.key_file.exists():
        raise KeyFileError(
            f"{location.path} exists but its key file {source.key_file} is missing; restore the "
            f"key file from a backup, or set {source.env_var} to the key it was created with"
        )
    return DatabaseKey(read_key_file(source.key_file), source)


def _inspect(ctx: DoctorContext, path, shown: str, key) -> Check:
    import sqlcipher3

    from capy.store import connect

    conn = connect(path, key)
    try:
        result = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        sources = conn.execute("SELECT count(*) FROM sources").fetchone()[0]
        stale = conn.execute(
            "SELECT count(*) FROM sources WHERE index_version IS NOT ?",
            (ctx.ruleset.index_version,),
        ).fetchone()[0]
    except sqlcipher3.DatabaseError as error:
        reason = str(error)
        if "not a database" in reason:
            return Check(
                GROUP,
                NAME,
                Status.FAIL,
                f"{shown} does not open with the configured key ({key.source.label})",
                "set CAPY_DB_KEY to the key it was created with, or restore its key file",
            )
        return Check(GROUP, NAME, Status.FAIL, f"{shown}: SQLite reports {reason}", _REPAIR)
    finally:
        conn.close()
    if result != ["ok"]:
        return Check(GROUP, NAME, Status.FAIL, f"{shown}: quick_check: {result[0]}", _REPAIR)
    noun = "source" if sources == 1 else "sources"
    detail = f"{shown}: quick_check ok, {sources} {noun}, {_size(path)}"
    if stale:
        return Check(
            GROUP,
            NAME,
            Status.WARN,
            f"{detail}; {stale} indexed with older rules",
            "run `capy reindex` to re-chunk them with the rules in force",
        )
    return Check(GROUP, NAME, Status.OK, detail)


_REPAIR = (
    "move the file aside (capy starts a fresh one and keeps nothing derived only there), "
    "or restore it from a backup"
)


def _size(path) -> str:
    from capy.units import human_bytes

    wal = path.with_name(path.name + "-wal")
    total = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return human_bytes(total) + " with its WAL"
