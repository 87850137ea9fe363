"""`capy vault import`: discover session files, keep them verbatim, index their messages.

Each session is one transaction (blobs, session row, files, message rows, vocabulary), so a
process killed half-way leaves every finished session in place and no trace of the unfinished
one: the next run imports it. A session already archived with the same files is recognised by
their hashes before anything is parsed, so importing twice writes nothing. When the same
session (platform and id) arrives again, the larger copy wins: an agent only appends, so the
larger copy is the later one.

A dry run takes the same path and decides the same outcomes; only the writes are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.sessions.discovery import SessionFile, discover_sessions, parse_session, peek_cwd
from capy.sessions.redaction import redact_session
from capy.sessions.report import SessionsReport
from capy.store.database import transaction
from capy.userfiles import UserFileError, read_user_file
from capy.vault.blobs import drop_unreferenced, store_blob
from capy.vault.messages import message_rows, replace_rows

if TYPE_CHECKING:
    from sqlcipher3 import Connection

    from capy.rules import RuleSet
    from capy.rules.views.transcripts import TranscriptsPack
    from capy.sessions.model import Session
    from capy.vault import Vault

Progress = Callable[[int, int], None]

# Outcomes, in the order a report lists them.
IMPORTED = "imported"
REPLACED = "replaced"  # a larger copy of an archived session replaced it
UNCHANGED = "unchanged"  # the same files are archived already
KEPT = "kept"  # a copy no larger than the archived one arrived; the archived one stays
FAILED = "failed"
OUTCOMES = (IMPORTED, REPLACED, UNCHANGED, KEPT, FAILED)
# How often a session that keeps growing while it is parsed is read again.
_STABLE_READ_ATTEMPTS = 3
# The largest transcript file archived whole (they are held in memory to hash and compress);
# real sessions stay far below it, and a larger file fails alone, saying so.
MAX_SESSION_FILE_BYTES = 1024 * 1024 * 1024


@dataclass
class SessionImport:
    path: str
    platform: str
    outcome: str = FAILED
    session_id: str = ""
    reason: str = ""
    files: int = 0
    bytes: int = 0
    messages: int = 0
    malformed_lines: int = 0


@dataclass
class ImportReport(SessionsReport):
    OUTCOMES = OUTCOMES
    sessions: list[SessionImport] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        written = [item for item in self.sessions if item.outcome in (IMPORTED, REPLACED)]
        return {
            "sessions": len(self.sessions),
            "files": sum(item.files for item in written),
            "bytes": sum(item.bytes for item in written),
            "messages": sum(item.messages for item in written),
            "malformed_lines": sum(item.malformed_lines for item in written),
        }


@dataclass
class ImportOptions:
    source: Path | None = None  # a folder laid out like the agents' own, instead of theirs
    dry_run: bool = False
    project: str | None = None  # only sessions whose working directory contains this text


@dataclass(frozen=True)
class _Files:
    """A session's files as read once: relative path -> bytes, transcript first."""

    contents: dict[str, bytes]

    @property
    def size(self) -> int:
        return sum(len(data) for data in self.contents.values())


def import_sessions(
    vault: Vault | None,
    options: ImportOptions,
    *,
    progress: Progress | None = None,
    rules: RuleSet | None = None,
) -> ImportReport:
    """Import every discovered session; `vault` may be None for a dry run with no vault yet."""
    from capy.rules import load_rules

    rules = rules or load_rules()
    transcripts = rules.view("transcripts")
    files = discover_sessions(rules.view("platforms"), transcripts, options.source)
    if options.project:
        files = [item for item in files if options.project in (peek_cwd(item.path) or "")]
    report = ImportReport(dry_run=options.dry_run)
    for done, item in enumerate(files, 1):
        outcome = SessionImport(path=str(item.path), platform=item.platform)
        try:
            _import_one(vault, item, outcome, rules, options.dry_run)
        except UserFileError as error:
            outcome.outcome, outcome.reason = FAILED, error.message
        except OSError as error:
            outcome.outcome, outcome.reason = FAILED, f"cannot read it: {error.strerror or error}"
        except Exception as error:  # a StoreError carries a sentence; a parse bug must not
            outcome.outcome = FAILED  # stop the other sessions from being archived
            outcome.reason = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        report.sessions.append(outcome)
        if progress:
            progress(done, len(files))
    return report


def _import_one(
    vault: Vault | None, item: SessionFile, outcome: SessionImport, rules: RuleSet, dry: bool
) -> None:
    files = _read_files(item)
    if vault is not None and _archived_unchanged(vault, files):
        outcome.files, outcome.bytes = len(files.contents), files.size
        outcome.outcome, outcome.reason = UNCHANGED, "already archived with the same files"
        return
    transcripts = rules.view("transcripts")
    session, files = _parse_as_read(item, files, transcripts)
    outcome.files, outcome.bytes = len(files.contents), files.size
    outcome.session_id = session.session_id
    outcome.malformed_lines = sum(part.report.malformed_count for part in session.all_sessions())
    existing = _existing(vault.conn, item.platform, session.session_id) if vault else None
    if _keeps_archived(existing, files, outcome):
        return
    outcome.outcome = REPLACED if existing is not None else IMPORTED
    redact_session(session, rules.view("secrets"))
    rows = message_rows(session, transcripts)
    outcome.messages = len(rows)
    if dry or vault is None:
        return
    with transaction(vault.conn) as conn:
        # Again under the write lock: another import may have archived it meanwhile.
        existing = _existing(conn, item.platform, session.session_id)
        if _keeps_archived(existing, files, outcome):
            return
        outcome.outcome = REPLACED if existing is not None else IMPORTED
        session_rowid = _save_session(conn, session, item, files, existing, rules)
        replace_rows(conn, session_rowid, rows, rules.index_version)


def _keeps_archived(
    existing: tuple[int, int] | None, files: _Files, outcome: SessionImport
) -> bool:
    """The larger copy wins; on a tie the archived one stays (nothing to gain from churn)."""
    if existing is None or existing[1] < files.size:
        return False
    outcome.outcome = KEPT
    outcome.reason = f"the archived copy is as large or larger ({existing[1]:,} bytes)"
    outcome.messages = 0
    return True


def _parse_as_read(
    item: SessionFile, files: _Files, transcripts: TranscriptsPack
) -> tuple[Session, _Files]:
    """Parse the session, making sure the index describes the bytes archived: a live session
    may grow while it is parsed, and then it is read and parsed again (a few times at most)."""
    for _ in range(_STABLE_READ_ATTEMPTS):
        session = parse_session(item, transcripts)
        again = _read_files(item)
        if again == files:
            return session, files
        files = again
    return session, files  # still growing: the next import archives the larger copy


def _read_files(item: SessionFile) -> _Files:
    base = item.path.parent
    return _Files(
        {
            path.relative_to(base).as_posix(): read_user_file(
                path, limit=MAX_SESSION_FILE_BYTES, purpose="archive"
            ).head
            for path in item.related_files()
        }
    )


def _archived_unchanged(vault: Vault, files: _Files) -> bool:
    """True when one archived session holds exactly these files (by relative path and hash)."""
    from capy.vault.blobs import content_hash

    wanted = {relpath: content_hash(data) for relpath, data in files.contents.items()}
    main, digest = next(iter(wanted.items()))
    for (session_rowid,) in vault.conn.execute(
        "SELECT session FROM session_files WHERE relpath = ? AND blob_hash = ?", (main, digest)
    ).fetchall():
        stored = dict(
            vault.conn.execute(
                "SELECT relpath, blob_hash FROM session_files WHERE session = ?", (session_rowid,)
            ).fetchall()
        )
        if stored == wanted:
            return True
    return False


def _existing(conn: Connection, platform: str, session_id: str) -> tuple[int, int] | None:
    row = conn.execute(
        "SELECT id, size FROM sessions WHERE platform = ? AND session_id = ?",
        (platform, session_id),
    ).fetchone()
    return (row[0], row[1]) if row else None


def _save_session(
    conn: Connection,
    session: Session,
    item: SessionFile,
    files: _Files,
    existing: tuple[int, int] | None,
    rules: RuleSet,
) -> int:
    """Blobs, the session row and its file list; returns the session's rowid."""
    hashes = {relpath: store_blob(conn, data)[0] for relpath, data in files.contents.items()}
    return save_session_row(conn, _facts(session, item, files, rules), hashes, existing)


def save_session_row(
    conn: Connection,
    facts: dict[str, object],
    hashes: dict[str, str],
    existing: tuple[int, int] | None,
) -> int:
    """Insert the session row (or update the `existing` one) and point it at its files, whose
    blobs are stored already; blobs only its old files used are dropped. Returns the rowid."""
    if existing is None:
        columns = ", ".join(facts)
        marks = ", ".join("?" * len(facts))
        cursor = conn.execute(
            f"INSERT INTO sessions ({columns}) VALUES ({marks})", tuple(facts.values())
        )
        session_rowid = cursor.lastrowid
        old_hashes: list[str] = []
    else:
        session_rowid = existing[0]
        old_hashes = [
            row[0]
            for row in conn.execute(
                "SELECT blob_hash FROM session_files WHERE session = ?", (session_rowid,)
            )
        ]
        assignments = ", ".join(f"{column} = ?" for column in facts)
        conn.execute(
            f"UPDATE sessions SET {assignments}, imported_at = unixepoch() WHERE id = ?",
            (*facts.values(), session_rowid),
        )
        conn.execute("DELETE FROM session_files WHERE session = ?", (session_rowid,))
    conn.executemany(
        "INSERT INTO session_files (session, relpath, blob_hash) VALUES (?, ?, ?)",
        [(session_rowid, relpath, digest) for relpath, digest in hashes.items()],
    )
    drop_unreferenced(conn, old_hashes)
    return session_rowid


def _facts(session: Session, item: SessionFile, files: _Files, rules: RuleSet) -> dict[str, object]:
    parts = session.all_sessions()
    return {
        "platform": item.platform,
        "session_id": session.session_id,
        "project": session.cwd,
        "git_branch": session.git_branch,
        "model": session.model,
        "title": _title(session, rules.view("transcripts").chunking.title_chars),
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "message_count": sum(len(part.messages) for part in parts),
        "tool_call_count": sum(len(part.tool_calls) for part in parts),
        "malformed_lines": sum(part.report.malformed_count for part in parts),
        "source_path": str(item.path),
        "size": files.size,
        "index_version": rules.index_version,
    }


def _title(session: Session, limit: int) -> str | None:
    """The agent's own title when it wrote one, else the first prompt's first words."""
    if session.title:
        return session.title
    first = next(iter(session.prompts), None)
    return " ".join(first.text.split())[:limit] or None if first else None
