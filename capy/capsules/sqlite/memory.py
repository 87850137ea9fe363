"""Memory's tables in the capsule database: records, the learning log and the projection's
progress per scope (capy.memory holds no SQL)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlcipher3

from capy.canonical import canonical_json
from capy.capsules.model import Scope
from capy.store.database import transaction


def progress(conn: sqlcipher3.Connection) -> dict[Scope, tuple[int, str]]:
    rows = conn.execute("SELECT tenant, project, last_n, version FROM memory_progress")
    return {Scope(str(p), str(t)): (int(n), str(v)) for t, p, n, v in rows}


def scopes_with_news(conn: sqlcipher3.Connection, version: str) -> list[tuple[Scope, int]]:
    """Scopes whose capsules go past the projection's progress (or were read under another
    pack version), with their newest capsule number."""
    rows = conn.execute(
        "SELECT c.tenant, c.project, max(c.n) FROM capsules c "
        "LEFT JOIN memory_progress p ON p.tenant = c.tenant AND p.project = c.project "
        "GROUP BY c.tenant, c.project "
        "HAVING max(c.n) > coalesce(max(p.last_n), 0) OR coalesce(max(p.version), '') != ?",
        (version,),
    )
    return [(Scope(str(project), str(tenant)), int(last)) for tenant, project, last in rows]


def replace_scope(
    conn: sqlcipher3.Connection,
    scope: Scope,
    records: Iterable[dict[str, Any]],
    log: Iterable[tuple[float, str, str, str]],
    *,
    last_n: int,
    version: str,
) -> None:
    """The scope's records and log replaced by a fresh projection, with its progress, at once."""
    where = (scope.tenant, scope.project)
    with transaction(conn):
        conn.execute("DELETE FROM memory_records WHERE tenant = ? AND project = ?", where)
        conn.execute("DELETE FROM memory_log WHERE tenant = ? AND project = ?", where)
        conn.executemany(
            "INSERT INTO memory_records (id, tenant, project, type, status, confidence, record, "
            "version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    item["id"],
                    scope.tenant,
                    scope.project,
                    item["type"],
                    item["status"],
                    item["confidence"],
                    canonical_json(item),
                    version,
                )
                for item in records
            ],
        )
        conn.executemany(
            "INSERT INTO memory_log (tenant, project, at, record_id, event, detail) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(*where, *entry) for entry in log],
        )
        conn.execute(
            "INSERT INTO memory_progress (tenant, project, last_n, version) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant, project) DO UPDATE SET last_n = excluded.last_n, "
            "version = excluded.version",
            (*where, last_n, version),
        )


def clear(conn: sqlcipher3.Connection) -> None:
    with transaction(conn):
        for table in ("memory_records", "memory_log", "memory_progress"):
            conn.execute(f"DELETE FROM {table}")


def records(conn: sqlcipher3.Connection, scope: Scope | None = None) -> list[dict[str, Any]]:
    if scope is None:
        rows = conn.execute("SELECT record FROM memory_records ORDER BY confidence DESC, id")
    else:
        rows = conn.execute(
            "SELECT record FROM memory_records WHERE tenant = ? AND (project = ? OR "
            "json_extract(record, '$.scope') = 'global') ORDER BY confidence DESC, id",
            (scope.tenant, scope.project),
        )
    return [json.loads(row[0]) for row in rows]


def log_entries(
    conn: sqlcipher3.Connection, scope: Scope | None, limit: int
) -> list[tuple[float, str, str, str]]:
    where, params = (
        ("", ())
        if scope is None
        else (" WHERE tenant = ? AND project = ?", (scope.tenant, scope.project))
    )
    rows = conn.execute(
        f"SELECT at, record_id, event, detail FROM memory_log{where} ORDER BY at DESC, id DESC "
        "LIMIT ?",
        (*params, limit),
    )
    return [(float(a), str(r), str(e), str(d)) for a, r, e, d in rows]
