"""`capy vault reindex`: rebuild message rows built with older rules, from the stored blobs.

A row carries the `index_version` (rules hash) it was built with; so does its session. Sessions
are rebuilt in batches: each batch is parsed first, then written in one transaction, so a
process killed mid-way leaves every finished batch in place, the unfinished one as it was, and
the next run picks up the sessions still stale. Blobs are only read, never written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from capy.store.database import transaction
from capy.vault.messages import MessageRow, message_rows, replace_rows

if TYPE_CHECKING:
    from sqlcipher3 import Connection

    from capy.rules import RuleSet
    from capy.vault import Vault

Progress = Callable[[int, int], None]
# Sessions parsed per transaction: large enough to amortise the commit, small enough that the
# write lock is never held long against an importing hook.
BATCH_SESSIONS = 20


@dataclass
class ReindexReport:
    sessions: int = 0  # sessions rebuilt
    messages: int = 0  # rows written
    bytes: int = 0  # uncompressed bytes of the sessions rebuilt
    failed: list[dict[str, str]] = field(default_factory=list)  # {session, reason}


def stale_sessions(conn: Connection, index_version: str, *, everything: bool = False) -> list[int]:
    """Rowids of the sessions whose rows were built with other rules (all with `everything`)."""
    rows = conn.execute(
        "SELECT id FROM sessions WHERE ? OR index_version IS NOT ? ORDER BY id",
        (everything, index_version),
    )
    return [row[0] for row in rows]


def reindex_vault(
    vault: Vault,
    *,
    rules: RuleSet | None = None,
    everything: bool = False,
    progress: Progress | None = None,
) -> ReindexReport:
    from capy.rules import load_rules

    rules = rules or load_rules()
    todo = stale_sessions(vault.conn, rules.index_version, everything=everything)
    report = ReindexReport()
    for start in range(0, len(todo), BATCH_SESSIONS):
        batch = todo[start : start + BATCH_SESSIONS]
        # Parsed before the write lock is taken, so an importing hook never waits on a parse.
        built = [
            (rowid, files_of(vault.conn, rowid), rows)
            for rowid in batch
            if (rows := _rows_or_fail(vault, rowid, rules, report)) is not None
        ]
        with transaction(vault.conn) as conn:
            for rowid, files, rows in built:
                if files_of(conn, rowid) != files:
                    continue  # replaced (rebuilt with these rules) or deleted meanwhile
                write_rows(conn, rowid, rows, rules.index_version)
                report.sessions += 1
                report.messages += len(rows)
                report.bytes += conn.execute(
                    "SELECT size FROM sessions WHERE id = ?", (rowid,)
                ).fetchone()[0]
        if progress:
            progress(start + len(batch), len(todo))
    return report


def files_of(conn: Connection, session_rowid: int) -> dict[str, str]:
    """A session's files (relative path -> blob hash); empty once it is deleted."""
    return dict(
        conn.execute(
            "SELECT relpath, blob_hash FROM session_files WHERE session = ?", (session_rowid,)
        ).fetchall()
    )


def _rows_or_fail(
    vault: Vault, rowid: int, rules: RuleSet, report: ReindexReport
) -> list[MessageRow] | None:
    try:
        return session_rows(vault.conn, rowid, rules)
    except Exception as error:  # a corrupt blob or a parser bug must not stop the others
        label = vault.conn.execute(
            "SELECT platform || ':' || session_id FROM sessions WHERE id = ?", (rowid,)
        ).fetchone()[0]
        reason = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        report.failed.append({"session": label, "reason": reason})
        return None


def session_rows(conn: Connection, session_rowid: int, rules: RuleSet) -> list[MessageRow]:
    """The rows an import of the archived files would build: parsed, redacted, per the pack."""
    from capy.sessions.redaction import redact_session
    from capy.vault.archived import parse_archived

    session = parse_archived(conn, session_rowid, rules)
    redact_session(session, rules.view("secrets"))
    return message_rows(session, rules.view("transcripts"))


def write_rows(
    conn: Connection, session_rowid: int, rows: list[MessageRow], index_version: str
) -> None:
    """Swap the session's rows and record the rules they were built with. In a transaction."""
    replace_rows(conn, session_rowid, rows, index_version)
    conn.execute(
        "UPDATE sessions SET index_version = ? WHERE id = ?", (index_version, session_rowid)
    )
