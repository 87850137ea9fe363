"""What the vault holds: the session list and the figures `capy vault stats` prints."""

from __future__ import annotations

from dataclasses import dataclass

from capy.vault import Vault


@dataclass(frozen=True)
class SessionSummary:
    label: str  # <platform>:<session id>
    platform: str
    session_id: str
    project: str | None
    title: str | None
    started_at: str | None
    ended_at: str | None
    messages: int
    tool_calls: int
    files: int
    size: int  # uncompressed bytes of its files


def list_sessions(vault: Vault, project: str | None = None) -> list[SessionSummary]:
    """Newest first; `project` keeps sessions whose working directory contains it."""
    rows = vault.conn.execute(
        """
        SELECT s.platform, s.session_id, s.project, s.title, s.started_at, s.ended_at,
               s.message_count, s.tool_call_count,
               (SELECT count(*) FROM session_files WHERE session = s.id), s.size
          FROM sessions AS s
         WHERE ? IS NULL OR instr(s.project, ?) > 0
         ORDER BY coalesce(s.started_at, '') DESC, s.id DESC
        """,
        (project, project),
    ).fetchall()
    return [SessionSummary(f"{row[0]}:{row[1]}", *row) for row in rows]


def vault_stats(vault: Vault, index_version: str) -> dict[str, object]:
    """Sizes, counts, compression and the reindex backlog (rows built with older rules)."""
    conn = vault.conn
    sessions, files_size = conn.execute(
        "SELECT count(*), coalesce(sum(size), 0) FROM sessions"
    ).fetchone()
    blobs, raw, stored = conn.execute(
        "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0) FROM blobs"
    ).fetchone()
    stale = conn.execute(
        "SELECT count(*) FROM sessions WHERE index_version IS NOT ?", (index_version,)
    ).fetchone()[0]
    per_project = conn.execute(
        "SELECT coalesce(project, ''), count(*) FROM sessions GROUP BY 1 ORDER BY 2 DESC, 1"
    ).fetchall()
    messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    return {
        "path": str(vault.path),
        "file_bytes": file_bytes(vault),
        "sessions": sessions,
        "messages": messages,
        "blobs": blobs,
        "uncompressed_bytes": raw,
        "stored_bytes": stored,
        "compression_ratio": round(raw / stored, 2) if stored else None,
        "session_bytes": files_size,  # before deduplication
        "reindex_backlog": stale,
        "per_project": {project or "(unknown)": count for project, count in per_project},
    }


def file_bytes(vault: Vault) -> int:
    """The vault file and its WAL, as the disk holds them."""
    total = 0
    for suffix in ("", "-wal"):
        path = vault.path.with_name(vault.path.name + suffix)
        total += path.stat().st_size if path.exists() else 0
    return total
