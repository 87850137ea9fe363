"""Summaries and the chat-model reply cache on SQLCipher."""

from __future__ import annotations

import time
from collections.abc import Sequence

import sqlcipher3

from capy.capsules.model import Scope
from capy.capsules.summarising import Piece, SummaryRow

# A summary reads only the head of each capsule: its first sentences carry what it is about.
HEAD_CHARS = 4000


def scope_pieces(
    conn: sqlcipher3.Connection, scope: Scope
) -> tuple[dict[str, list[Piece]], list[Piece]]:
    """A scope's live capsules as pieces: grouped by session (seq order), and all of them."""
    sessions: dict[str, list[Piece]] = {}
    everything: list[Piece] = []
    rows = conn.execute(
        "SELECT seq, kind, substr(content, 1, ?), created_ts, coalesce(session_id, '') "
        "FROM capsules WHERE tenant = ? AND project = ? AND forgotten_reason IS NULL "
        "ORDER BY seq",
        (HEAD_CHARS, scope.tenant, scope.project),
    )
    for seq, kind, text, created_ts, session_id in rows:
        piece = Piece(int(seq), int(seq), str(kind), str(text), float(created_ts))
        everything.append(piece)
        sessions.setdefault(str(session_id), []).append(piece)
    return sessions, everything


def replace_summaries(
    conn: sqlcipher3.Connection, scope: Scope, rows: Sequence[SummaryRow], version: str
) -> None:
    conn.execute(
        "DELETE FROM summaries WHERE tenant = ? AND project = ?", (scope.tenant, scope.project)
    )
    conn.executemany(
        "INSERT INTO summaries (tenant, project, session_id, level, first_seq, last_seq, "
        "content, method, version, created_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                scope.tenant,
                scope.project,
                row.session_id,
                row.level,
                row.first_seq,
                row.last_seq,
                row.content,
                row.method,
                version,
                row.created_ts,
            )
            for row in rows
        ],
    )


def cached_reply(conn: sqlcipher3.Connection, prompt_hash: str) -> str | None:
    row = conn.execute(
        "SELECT reply FROM llm_replies WHERE prompt_hash = ?", (prompt_hash,)
    ).fetchone()
    return None if row is None else str(row[0])


def keep_reply(conn: sqlcipher3.Connection, prompt_hash: str, model: str, reply: str) -> None:
    """Cache a reply; the caller holds a transaction (or none: the insert is one statement)."""
    conn.execute(
        "INSERT OR IGNORE INTO llm_replies (prompt_hash, model, reply, created_ts) "
        "VALUES (?, ?, ?, ?)",
        (prompt_hash, model, reply, time.time()),
    )
