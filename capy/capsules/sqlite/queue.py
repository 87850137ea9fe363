"""The durable job queue on SQLCipher: claim with a lease, finish, fail with backoff.

A job is (target, stage, derivation version), unique, so writing it twice is one job and a
stage run twice for the same version is a no-op for the queue. A worker claims ready jobs (and
running ones whose lease ran out: their worker died) by setting a lease in one `BEGIN
IMMEDIATE` transaction, so two workers never hold the same job. A stage whose `after` stages
are not done for the same target yet is not claimable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.store.database import transaction


@dataclass(frozen=True)
class Job:
    id: int
    target: str
    stage: str
    version: str
    attempts: int


@dataclass(frozen=True)
class StageBacklog:
    stage: str
    ready: int
    running: int
    done: int
    dead: int
    stale: int  # done, but with another derivation version than the current one


def enqueue(
    conn: sqlcipher3.Connection, jobs: Sequence[tuple[str, str, str]], *, now: float | None = None
) -> int:
    """Write (target, stage, version) jobs that do not exist yet; the count written. The caller
    holds the transaction (the outbox: the same one as the capsule or derived rows)."""
    now = time.time() if now is None else now
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO capsule_jobs (target, stage, version, enqueued_at) "
        "VALUES (?, ?, ?, ?)",
        [(target, stage, version, now) for target, stage, version in jobs],
    )
    return conn.total_changes - before


def claim(
    conn: sqlcipher3.Connection,
    stage: str,
    *,
    worker: str,
    lease_seconds: float,
    limit: int,
    after: Sequence[str] = (),
    window: int | None = None,
    now: float | None = None,
) -> list[Job]:
    """Lease up to `limit` claimable jobs of `stage` to `worker`, oldest first.

    A stage with `after` stages looks only at its oldest `window` waiting jobs (default: all):
    the stages before it work oldest first too, so those are the ones that become claimable
    first, and a claim never reads the whole backlog of jobs still waiting for another stage.
    A job whose `after` job is dead can never run: it is marked dead too, so that it does not
    hold a place in the window."""
    now = time.time() if now is None else now
    # `+dep.state`: without it the planner seeks the dependency through the claimable index
    # (every done job of that stage, for each candidate: quadratic in the log's size) instead
    # of the (target, stage, version) key.
    waits = "".join(
        " AND EXISTS (SELECT 1 FROM capsule_jobs AS dep WHERE dep.target = j.target"
        " AND dep.stage = ? AND +dep.state = 'done')"
        for _ in after
    )
    # `state IN ('ready', 'running')` is the pending index's own condition, which lets a claim
    # walk only the jobs not done yet.
    pending = (
        "SELECT id, target, stage, version, attempts FROM capsule_jobs "
        "WHERE stage = ? AND state IN ('ready', 'running') "
        "AND ((state = 'ready' AND not_before <= ?) OR (state = 'running' AND lease_until < ?)) "
        "ORDER BY id"
    )
    bounded = bool(after) and window is not None
    with transaction(conn):
        for name in after:
            _bury_orphans(conn, stage, name)
        rows = conn.execute(
            f"SELECT j.* FROM ({pending}{' LIMIT ?' if bounded else ''}) AS j "
            f"WHERE 1 = 1{waits} ORDER BY j.id LIMIT ?",
            (stage, now, now, *([window] if bounded else []), *after, limit),
        ).fetchall()
        conn.executemany(
            "UPDATE capsule_jobs SET state = 'running', lease_owner = ?, lease_until = ? "
            "WHERE id = ?",
            [(worker, now + lease_seconds, row[0]) for row in rows],
        )
    return [Job(int(i), str(t), str(s), str(v), int(a)) for i, t, s, v, a in rows]


def _bury_orphans(conn: sqlcipher3.Connection, stage: str, after: str) -> None:
    """Mark dead the waiting jobs of `stage` whose `after` job for the same target is dead."""
    # Driven from the dead jobs (few, found by the claimable index), each waiting job then
    # found by its (target, stage) key (`+j.state` keeps the planner off the state index):
    # walking the stage's waiting jobs instead cost 0.2 s a claim at 100,000 capsules.
    conn.execute(
        "UPDATE capsule_jobs SET state = 'dead', last_error = ? WHERE id IN "
        "(SELECT j.id FROM capsule_jobs AS d JOIN capsule_jobs AS j "
        "ON j.target = d.target AND j.stage = ? WHERE d.state = 'dead' AND d.stage = ? "
        "AND +j.state = 'ready')",
        (f"its {after} job is dead", stage, after),
    )


def finish(conn: sqlcipher3.Connection, job: Job, worker: str) -> bool:
    """Mark `job` done, if `worker` still holds it; the caller holds the transaction, which
    also writes the stage's derived rows, so a job is done exactly when its rows exist."""
    cursor = conn.execute(
        "UPDATE capsule_jobs SET state = 'done', finished_at = ?, lease_owner = NULL, "
        "lease_until = NULL, last_error = NULL WHERE id = ? AND state = 'running' "
        "AND lease_owner = ?",
        (time.time(), job.id, worker),
    )
    return cursor.rowcount == 1


def exists(conn: sqlcipher3.Connection, job: Job) -> bool:
    return conn.execute("SELECT 1 FROM capsule_jobs WHERE id = ?", (job.id,)).fetchone() is not None


def fail(
    conn: sqlcipher3.Connection,
    job: Job,
    worker: str,
    error: str,
    *,
    max_attempts: int,
    backoff: float,
    in_transaction: bool = False,
) -> None:
    """Record a failed attempt: the job waits `backoff` seconds, or is dead when out of tries.
    In its own transaction, unless `in_transaction` (the caller holds one)."""
    if not in_transaction:
        with transaction(conn):
            fail(
                conn,
                job,
                worker,
                error,
                max_attempts=max_attempts,
                backoff=backoff,
                in_transaction=True,
            )
        return
    attempts = job.attempts + 1
    state = "dead" if attempts >= max_attempts else "ready"
    conn.execute(
        "UPDATE capsule_jobs SET state = ?, attempts = ?, not_before = ?, last_error = ?, "
        "lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?",
        (state, attempts, time.time() + backoff, error[:2000], job.id, worker),
    )


def backlog(conn: sqlcipher3.Connection, current: dict[str, str]) -> list[StageBacklog]:
    """Counts per stage; `current` maps each stage to its derivation version now."""
    backlogs: list[StageBacklog] = []
    for stage, version in current.items():
        tally = {"ready": 0, "running": 0, "done": 0, "dead": 0, "stale": 0}
        for state, is_current, count in conn.execute(
            "SELECT state, version = ?, count(*) FROM capsule_jobs WHERE stage = ? "
            "GROUP BY state, version = ?",
            (version, stage, version),
        ):
            tally["stale" if state == "done" and not is_current else str(state)] += int(count)
        backlogs.append(StageBacklog(stage, **tally))
    return backlogs
