"""Capsules for a person to browse (`capy capsules list`): newest first, filtered."""

from __future__ import annotations

from dataclasses import dataclass

import sqlcipher3

from capy.capsules.model import Capsule
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
