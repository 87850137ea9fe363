"""Capsules for a person to browse (`capy capsules list`): newest first, filtered; and the
transcript events a source already holds, which a repeated backfill leaves out."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlcipher3

from capy.capsules.model import Capsule, Scope
from capy.capsules.sqlite.log import _COLUMNS, _capsule


@dataclass(frozen=True)
class CapsuleFilter:
    kind: str | None = None
    session_id: str | None = None
    since_ts: float | None = None  # Unix seconds; capsules created at or after it
    limit: int = 50


def newest(conn: sqlcipher3.Connection, wanted: CapsuleFilter) -> list[tuple[int, Capsule]]:
    clauses, params = [], []
    for clause, value in (
        ("kind = ?", wanted.kind),
        ("session_id = ?", wanted.session_id),
        ("created_ts >= ?", wanted.since_ts),
    ):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM capsules {where} ORDER BY created_ts DESC, n DESC LIMIT ?",
        (*params, wanted.limit),
    )
    return [_capsule(row) for row in rows]


def same_content(
    conn: sqlcipher3.Connection, scope: Scope, source: str, kind: str, content: str
) -> list[tuple[int, Capsule]]:
    """The scope's live capsules of `source` and `kind` holding exactly `content`, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM capsules WHERE kind = ? AND tenant = ? AND project = ? "
        "AND source = ? AND content = ? AND forgotten_reason IS NULL ORDER BY n",
        (kind, scope.tenant, scope.project, source, content),
    )
    return [_capsule(row) for row in rows]


def recorded_events(
    conn: sqlcipher3.Connection, source: str, session_ids: Iterable[str]
) -> set[tuple[str, str, str]]:
    """(session id, kind, event id) of `source`'s capsules in those sessions, the event id
    being the tool call's (`tool_use_id`), else the transcript line's (`message_uuid`)."""
    wanted = sorted(set(session_ids))
    found: set[tuple[str, str, str]] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            "SELECT session_id, kind, coalesce(json_extract(metadata, '$.tool_use_id'), "
            "json_extract(metadata, '$.message_uuid')) FROM capsules "
            f"WHERE session_id IN ({marks}) AND source = ?",
            (*part, source),
        )
        found.update((str(s), str(k), str(e)) for s, k, e in rows if e is not None)
    return found
