"""The vault's search rows: one per message of a parsed (and redacted) session.

Roles are the model's (user, assistant, tool, system). A tool-result row is titled with the
summary of the call it answers; an assistant row with the summaries of the calls it makes. What
of a result's body is kept follows the transcripts pack: errors always, nothing for
excluded-result tools, the diff for diff-result tools that carry one, the text otherwise.
Reasoning (`thinking`) is archived in the blob and left out of the index.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlcipher3

from capy.rules.views.transcripts import ResultMode, TranscriptsPack
from capy.sessions.model import Message, Session
from capy.store.migrations import chunk_rowid, chunk_rowid_range
from capy.store.vocabulary import apply_term_delta, term_counts


@dataclass(frozen=True)
class MessageRow:
    role: str
    title: str
    body: str
    timestamp: str


def message_rows(session: Session, pack: TranscriptsPack) -> list[MessageRow]:
    """The rows of a session and the sidecars the pack indexes (a compaction sidecar repeats
    the session), in file order; empty messages are left out."""
    parts = [session] + [
        sidecar for sidecar in session.sidecars if pack.claude.indexes_sidecar(sidecar.path.name)
    ]
    rows = []
    for part in parts:
        for message in part.messages:
            row = _row(message, pack)
            if row.title.strip() or row.body.strip():
                rows.append(row)
    return rows


def _row(message: Message, pack: TranscriptsPack) -> MessageRow:
    title = "; ".join(call.summary for call in message.tool_calls if call.summary)
    body = message.text
    if message.result is not None:
        title = message.result.summary or message.result.tool
        body = _result_body(message, pack)
    return MessageRow(message.role, title, body, message.timestamp or "")


def _result_body(message: Message, pack: TranscriptsPack) -> str:
    result = message.result
    assert result is not None
    if result.is_error:
        return result.text
    mode = pack.result_mode(result.tool)
    if mode == ResultMode.EXCLUDED:
        return ""
    if mode == ResultMode.DIFF and result.diff:
        return result.diff
    return result.text


def replace_rows(
    conn: sqlcipher3.Connection, session_rowid: int, rows: list[MessageRow], index_version: str
) -> None:
    """Swap a session's rows (and their vocabulary counts). Call inside a transaction."""
    first, last = chunk_rowid_range(session_rowid)
    old = conn.execute(
        "SELECT title, body FROM messages WHERE rowid BETWEEN ? AND ?", (first, last)
    ).fetchall()
    removed = term_counts(text for row in old for text in row)
    conn.execute("DELETE FROM messages WHERE rowid BETWEEN ? AND ?", (first, last))
    conn.execute("DELETE FROM messages_trigram WHERE rowid BETWEEN ? AND ?", (first, last))
    numbered = [(chunk_rowid(session_rowid, ordinal), row) for ordinal, row in enumerate(rows)]
    conn.executemany(
        "INSERT INTO messages (rowid, title, body, role, timestamp, index_version) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(rowid, r.title, r.body, r.role, r.timestamp, index_version) for rowid, r in numbered],
    )
    conn.executemany(
        "INSERT INTO messages_trigram (rowid, title, body) VALUES (?, ?, ?)",
        [(rowid, row.title, row.body) for rowid, row in numbered],
    )
    added: Counter[str] = term_counts(text for row in rows for text in (row.title, row.body))
    apply_term_delta(conn, added, removed)
