"""`capy vault merge --from OTHER`: a non-destructive union with another machine's vault.

The other vault is only read (it is not even migrated). Each of its sessions is judged as an
import would judge the same files: a session archived here with the same files is unchanged;
a new one is added; a larger copy of one archived here replaces it, a copy no larger is kept
out. Blobs are decoded and verified before they are stored again, and message rows are rebuilt
from them with this capy's rules, so merging two vaults equals importing both, and merging
twice changes nothing. Each session is one transaction, as in an import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.store.database import transaction
from capy.vault.blobs import load_blob, store_blob
from capy.vault.errors import VaultError
from capy.vault.reindex import files_of, write_rows

if TYPE_CHECKING:
    from sqlcipher3 import Connection

    from capy.rules import RuleSet
    from capy.store.keys import DatabaseKey
    from capy.vault import Vault

Progress = Callable[[int, int], None]
# The session facts copied as they are; rowids, import times and index versions are this
# vault's own.
_FACTS = (
    "platform",
    "session_id",
    "project",
    "git_branch",
    "model",
    "title",
    "started_at",
    "ended_at",
    "message_count",
    "tool_call_count",
    "malformed_lines",
    "source_path",
    "size",
)


@dataclass
class MergeReport:
    outcomes: Counter[str] = field(default_factory=Counter)  # imported, replaced, unchanged, kept
    messages: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"counts": dict(self.outcomes), "messages": self.messages}


def merge_vault(
    vault: Vault,
    other_path: Path,
    other_key: DatabaseKey,
    *,
    rules: RuleSet | None = None,
    progress: Progress | None = None,
) -> MergeReport:
    from capy.rules import load_rules

    rules = rules or load_rules()
    if other_path.resolve() == vault.path.resolve():
        raise VaultError(f"{other_path} is the vault being merged into; give another vault")
    other = open_other_vault(other_path, other_key)
    try:
        report = MergeReport()
        sessions = other.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        for done, (other_rowid,) in enumerate(sessions, 1):
            outcome = _merge_one(vault, other, other_rowid, rules, report)
            report.outcomes[outcome] += 1
            if progress:
                progress(done, len(sessions))
        return report
    finally:
        other.close()


def open_other_vault(path: Path, key: DatabaseKey) -> Connection:
    """The other vault, read-only: its key proven, its format one this capy reads."""
    from capy.store.database import DatabaseError, connect
    from capy.store.errors import WrongKeyError
    from capy.store.maintenance import is_plaintext
    from capy.store.migrations import applied_migrations
    from capy.vault import plaintext_vault_error
    from capy.vault.schema import MIGRATIONS, check_reader_version

    if not path.is_file():
        raise VaultError(f"there is no vault at {path}; give the path of the vault to merge")
    if is_plaintext(path):
        raise plaintext_vault_error(path)
    conn = connect(path, key)
    try:
        conn.execute("PRAGMA query_only = ON")
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except DatabaseError:
            raise WrongKeyError(
                f"{path} is encrypted with a different key than the one from "
                f"{key.source.label}; nothing was changed: give its key with --from-key-file "
                "(the other machine's vault.key) or CAPY_FROM_VAULT_KEY"
            ) from None
        check_reader_version(conn)
        missing = {m.name for m in MIGRATIONS} - set(applied_migrations(conn))
        if missing:
            raise VaultError(
                f"{path} is not a complete capy vault (missing {', '.join(sorted(missing))}); "
                "open it once with `capy vault stats --path` to bring it up to date"
            )
    except BaseException:
        conn.close()
        raise
    return conn


def _merge_one(
    vault: Vault, other: Connection, other_rowid: int, rules: RuleSet, report: MergeReport
) -> str:
    from capy.vault.reindex import session_rows

    row = other.execute(
        f"SELECT {', '.join(_FACTS)} FROM sessions WHERE id = ?", (other_rowid,)
    ).fetchone()
    facts = dict(zip(_FACTS, row, strict=True))
    files = files_of(other, other_rowid)
    settled = _settled(vault.conn, facts, files)
    if settled:
        return settled
    # Parsed from the other vault before the write lock is taken; decided again under it.
    rows = session_rows(other, other_rowid, rules)
    with transaction(vault.conn) as conn:
        settled = _settled(conn, facts, files)
        if settled:
            return settled
        existing = _existing(conn, facts)
        session_rowid = _save(conn, other, facts, files, existing)
        write_rows(conn, session_rowid, rows, rules.index_version)
    report.messages += len(rows)
    return "replaced" if existing is not None else "imported"


def _existing(conn: Connection, facts: dict[str, object]) -> tuple[int, int] | None:
    return conn.execute(
        "SELECT id, size FROM sessions WHERE platform = ? AND session_id = ?",
        (facts["platform"], facts["session_id"]),
    ).fetchone()


def _settled(conn: Connection, facts: dict[str, object], files: dict[str, str]) -> str | None:
    """'unchanged' or 'kept' when the session here stays as it is; None when it is merged."""
    existing = _existing(conn, facts)
    if existing is None:
        return None
    if files_of(conn, existing[0]) == files:
        return "unchanged"
    if existing[1] >= facts["size"]:
        return "kept"  # the larger copy wins, as on import
    return None


def _save(
    conn: Connection,
    other: Connection,
    facts: dict[str, object],
    files: dict[str, str],
    existing: tuple[int, int] | None,
) -> int:
    from capy.vault.importer import save_session_row

    for digest in files.values():
        store_blob(conn, load_blob(other, digest))  # verified against its hash on the way
    # The other vault's index version says nothing here: rows are rebuilt with these rules.
    return save_session_row(conn, facts, files, existing)
