"""The capsule log on SQLCipher: append (with the outbox), read, chain links, erasure.

Every write is one `BEGIN IMMEDIATE` transaction: a capsule, its chain link, its scope's head
and its pipeline jobs land together or not at all, and two writers never read the same head.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.capsules.chain import GENESIS, ChainLink, link_hash
from capy.capsules.model import Capsule, Scope, capsule_id, unix_seconds
from capy.capsules.sqlite.derived import clear_chunks
from capy.capsules.sqlite.graph import forget_capsule_entities
from capy.capsules.sqlite.vectors import forget_from_neighbours
from capy.store.database import transaction

_COLUMNS = (
    "n, id, tenant, project, seq, source, kind, content, metadata, created_at, prev_hash, "
    "chain_hash, forgotten_reason"
)


@dataclass(frozen=True)
class Prepared:
    """A capsule ready to store: redacted, checked, with its id (capy.capsules.writing)."""

    id: str
    scope: Scope
    source: str
    kind: str
    content: str
    metadata_json: str
    created_at: str


@dataclass(frozen=True)
class Appended:
    id: str
    n: int
    seq: int
    scope: Scope
    new: bool  # False: the capsule was already there (writes are idempotent by id)


@dataclass(frozen=True)
class OutboxJob:
    """A job to write with each new capsule: its stage and that stage's derivation version."""

    stage: str
    version: str


def append(
    conn: sqlcipher3.Connection, capsules: Sequence[Prepared], outbox: Sequence[OutboxJob]
) -> list[Appended]:
    """Store `capsules` in order, chained per scope, with their jobs, in one transaction."""
    results: list[Appended] = []
    now = time.time()
    with transaction(conn):
        # Looked up in bulk and the jobs written in one statement: per-capsule statements
        # were most of a bulk import's write time.
        known = _known(conn, [capsule.id for capsule in capsules])
        heads: dict[Scope, tuple[int, str]] = {}
        jobs: list[tuple[str, str, str, float]] = []
        rows: list[tuple[object, ...]] = []
        # The write lock is held and capsules are never deleted, so the numbers are ours.
        n = int(conn.execute("SELECT coalesce(max(n), 0) FROM capsules").fetchone()[0])
        for capsule in capsules:
            if capsule.id in known:
                results.append(Appended(capsule.id, *known[capsule.id], False))
                continue
            scope = capsule.scope
            if scope not in heads:
                heads[scope] = _head(conn, scope) or (0, GENESIS)
            last_seq, prev = heads[scope]
            seq, chained = last_seq + 1, link_hash(prev, capsule.id)
            n += 1
            rows.append(
                (
                    n,
                    capsule.id,
                    scope.tenant,
                    scope.project,
                    seq,
                    capsule.source,
                    capsule.kind,
                    capsule.content,
                    capsule.metadata_json,
                    capsule.created_at,
                    unix_seconds(capsule.created_at),
                    prev,
                    chained,
                    now,
                )
            )
            heads[scope] = (seq, chained)
            jobs.extend((capsule.id, job.stage, job.version, now) for job in outbox)
            known[capsule.id] = (n, seq, scope)  # the same capsule twice in one batch is one
            results.append(Appended(capsule.id, n, seq, scope, True))
        conn.executemany(
            "INSERT INTO capsules (n, id, tenant, project, seq, source, kind, content, "
            "metadata, created_at, created_ts, prev_hash, chain_hash, written_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany(
            "INSERT OR IGNORE INTO capsule_jobs (target, stage, version, enqueued_at) "
            "VALUES (?, ?, ?, ?)",
            jobs,
        )
        conn.executemany(
            "INSERT INTO capsule_heads (tenant, project, seq, chain_hash) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant, project) DO UPDATE SET seq = excluded.seq, "
            "chain_hash = excluded.chain_hash",
            [
                (scope.tenant, scope.project, seq, chained)
                for scope, (seq, chained) in heads.items()
            ],
        )
    return results


def _known(conn: sqlcipher3.Connection, ids: Sequence[str]) -> dict[str, tuple[int, int, Scope]]:
    """The stored capsules among `ids`: id -> (n, seq, scope)."""
    found: dict[str, tuple[int, int, Scope]] = {}
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for cid, n, seq, tenant, project in conn.execute(
            f"SELECT id, n, seq, tenant, project FROM capsules WHERE id IN ({marks})", part
        ):
            found[str(cid)] = (int(n), int(seq), Scope(str(project), str(tenant)))
    return found


def _head(conn: sqlcipher3.Connection, scope: Scope) -> tuple[int, str] | None:
    row = conn.execute(
        "SELECT seq, chain_hash FROM capsule_heads WHERE tenant = ? AND project = ?",
        (scope.tenant, scope.project),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def heads(conn: sqlcipher3.Connection) -> dict[Scope, tuple[int, str]]:
    rows = conn.execute("SELECT tenant, project, seq, chain_hash FROM capsule_heads")
    return {Scope(project, tenant): (int(seq), str(h)) for tenant, project, seq, h in rows}


def _capsule(row: Sequence[object]) -> tuple[int, Capsule]:
    n, cid, tenant, project, seq, source, kind, content, metadata, created, prev, chained, why = row
    capsule = Capsule(
        id=str(cid),
        seq=int(seq),  # type: ignore[call-overload]
        scope=Scope(str(project), str(tenant)),
        source=str(source),
        kind=str(kind),
        content=str(content),
        metadata=json.loads(str(metadata)),
        created_at=str(created),
        prev_hash=str(prev),
        chain_hash=str(chained),
        forgotten_reason=None if why is None else str(why),
    )
    return int(n), capsule  # type: ignore[call-overload]


def get(conn: sqlcipher3.Connection, id_or_prefix: str) -> list[tuple[int, Capsule]]:
    """The capsules whose id is or starts with `id_or_prefix` (at most two: enough to tell an
    exact match from an ambiguous prefix)."""
    prefix = id_or_prefix.strip().lower()
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM capsules WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
        (prefix, prefix + "g"),
    )
    return [_capsule(row) for row in rows]


def by_number(conn: sqlcipher3.Connection, numbers: Iterable[int]) -> dict[int, Capsule]:
    wanted = sorted(set(numbers))
    found: dict[int, Capsule] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in conn.execute(f"SELECT {_COLUMNS} FROM capsules WHERE n IN ({marks})", part):
            n, capsule = _capsule(row)
            found[n] = capsule
    return found


def by_ids(conn: sqlcipher3.Connection, ids: Iterable[str]) -> dict[str, tuple[int, Capsule]]:
    """The stored capsules among the full `ids`: id -> (n, capsule)."""
    wanted = sorted(set(ids))
    found: dict[str, tuple[int, Capsule]] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in conn.execute(f"SELECT {_COLUMNS} FROM capsules WHERE id IN ({marks})", part):
            n, capsule = _capsule(row)
            found[capsule.id] = (n, capsule)
    return found


def scan(
    conn: sqlcipher3.Connection,
    scope: Scope | None = None,
    *,
    after_n: int = 0,
    batch: int = 1000,
) -> Iterator[tuple[int, Capsule]]:
    """Every capsule (of `scope`) in write order."""
    where, params = _scope_filter(scope)
    return _keyset(conn, "n", where, params, after_n, batch)


def chain_links(conn: sqlcipher3.Connection, scope: Scope) -> Iterator[ChainLink]:
    """A scope's links in seq order, each with whether its id still matches its fields."""
    where, params = _scope_filter(scope)
    for _, capsule in _keyset(conn, "seq", where, params, 0, 1000):
        matches = capsule.forgotten or capsule_id(capsule.body()) == capsule.id
        yield ChainLink(capsule.seq, capsule.id, capsule.prev_hash, capsule.chain_hash, matches)


def _scope_filter(scope: Scope | None) -> tuple[str, tuple[str, ...]]:
    if scope is None:
        return "", ()
    return " AND tenant = ? AND project = ?", (scope.tenant, scope.project)


def _keyset(
    conn: sqlcipher3.Connection,
    key: str,
    where: str,
    params: tuple[str, ...],
    after: int,
    batch: int,
) -> Iterator[tuple[int, Capsule]]:
    """The capsules `where` selects, in `key` order (n or seq), read `batch` at a time from
    past the last key seen: memory stays flat and no row is read twice."""
    position = _COLUMNS.split(", ").index(key)
    while True:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM capsules WHERE {key} > ?{where} ORDER BY {key} LIMIT ?",
            (after, *params, batch),
        ).fetchall()
        yield from map(_capsule, rows)
        if len(rows) < batch:
            return
        after = int(rows[-1][position])


def scopes(conn: sqlcipher3.Connection) -> list[Scope]:
    rows = conn.execute("SELECT DISTINCT tenant, project FROM capsules ORDER BY tenant, project")
    return [Scope(str(project), str(tenant)) for tenant, project in rows]


def forgotten_count(conn: sqlcipher3.Connection, scope: Scope) -> int:
    row = conn.execute(
        "SELECT count(*) FROM capsules WHERE tenant = ? AND project = ? "
        "AND forgotten_reason IS NOT NULL",
        (scope.tenant, scope.project),
    ).fetchone()
    return int(row[0])


def tombstone(conn: sqlcipher3.Connection, n: int, capsule: Capsule, reason: str) -> None:
    """Erase one capsule's content and metadata, and every row derived from it, in one
    transaction; id, seq and chain hashes stay, so the chain still verifies."""
    now = time.time()
    with transaction(conn):
        conn.execute(
            "UPDATE capsules SET content = '', metadata = '{}', forgotten_reason = ? WHERE n = ?",
            (reason, n),
        )
        conn.execute(
            "INSERT INTO capsule_erasures (capsule_id, reason, erased_at) VALUES (?, ?, ?)",
            (capsule.id, reason, now),
        )
        purge_derived(conn, n, capsule)
        conn.execute("DELETE FROM capsule_jobs WHERE target = ?", (capsule.id,))


def purge_derived(conn: sqlcipher3.Connection, n: int, capsule: Capsule) -> None:
    """Drop every derived row one capsule contributed to. Summaries that covered it go too
    (they quote it); the summarise stage writes them again without it."""
    clear_chunks(conn, n)
    forget_capsule_entities(conn, n)
    conn.execute("DELETE FROM capsule_vectors WHERE capsule_n = ?", (n,))
    # Its neighbours' vectors read its text too (the semantic pack's `capsule_context`).
    forget_from_neighbours(conn, n, capsule.metadata.get("session_id"))
    conn.execute(
        "DELETE FROM summaries WHERE tenant = ? AND project = ? AND first_seq <= ? "
        "AND last_seq >= ?",
        (capsule.scope.tenant, capsule.scope.project, capsule.seq, capsule.seq),
    )
    # Scope jobs run again, so the summaries come back without the erased capsule.
    conn.execute(
        "UPDATE capsule_jobs SET state = 'ready', attempts = 0, not_before = 0 "
        "WHERE target = ? AND state IN ('done', 'dead')",
        (scope_target(capsule.scope),),
    )


def scope_target(scope: Scope) -> str:
    return f"scope:{scope.tenant}/{scope.project}"
