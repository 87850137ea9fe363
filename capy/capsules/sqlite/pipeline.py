"""What the pipeline's worker needs of SQLCipher beyond claim/finish/fail: jobs for capsules a
stage version has not covered yet, superseding older versions, releasing unstarted claims,
scope readiness and progress, and dropping a stage's derived rows for a rebuild."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import sqlcipher3

from capy.capsules.model import Scope
from capy.capsules.sqlite.log import scope_target
from capy.capsules.sqlite.queue import Job

# The derived tables each stage writes (the log's schema names them all in DERIVED_TABLES).
STAGE_TABLES: dict[str, tuple[str, ...]] = {
    "chunk": ("capsule_chunks", "capsule_chunks_trigram", "capsule_chunk_sets"),
    "extract": ("capsule_entities", "capsule_relations", "entities"),
    "link": ("entity_edges",),
    "summarise": ("summaries",),
    "embed": ("capsule_vectors",),
}
_PROGRESS = "pipeline.progress"


def enqueue_missing(conn: sqlcipher3.Connection, stage: str, version: str) -> int:
    """A job at `version` for every live capsule without one: capsules written before the
    stage existed, or whose rows an older version of the stage made (stale).

    The capsules already looked at for this version are remembered (meta), so a worker that
    drains every few seconds scans only capsules written since, not the whole log: the outbox
    gave those their jobs already, unless a model changed the version."""
    key = f"{_PROGRESS}-enqueued.{stage}"
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    seen_version, _, seen_n = (str(row[0]) if row else "").partition(":")
    after_n = int(seen_n) if seen_version == version and seen_n.isdigit() else 0
    last = conn.execute("SELECT coalesce(max(n), 0) FROM capsules").fetchone()[0]
    before = conn.total_changes
    conn.execute(
        "INSERT OR IGNORE INTO capsule_jobs (target, stage, version, enqueued_at) "
        "SELECT c.id, ?, ?, ? FROM capsules AS c WHERE c.n > ? AND c.n <= ? "
        "AND c.forgotten_reason IS NULL AND NOT EXISTS "
        "(SELECT 1 FROM capsule_jobs AS j WHERE j.target = c.id AND j.stage = ? "
        "AND j.version = ?)",
        (stage, version, time.time(), after_n, last, stage, version),
    )
    added = conn.total_changes - before
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
        "SET value = excluded.value",
        (key, f"{version}:{last}"),
    )
    return added


def supersede(conn: sqlcipher3.Connection, job: Job) -> None:
    """Drop the target's jobs of the same stage at other versions: this one replaced their rows."""
    conn.execute(
        "DELETE FROM capsule_jobs WHERE target = ? AND stage = ? AND version != ?",
        (job.target, job.stage, job.version),
    )


def release(conn: sqlcipher3.Connection, jobs: Iterable[Job], worker: str) -> None:
    """Hand back claimed jobs not started (a deadline came), so nobody waits out their lease."""
    conn.executemany(
        "UPDATE capsule_jobs SET state = 'ready', lease_owner = NULL, lease_until = NULL "
        "WHERE id = ? AND state = 'running' AND lease_owner = ?",
        [(job.id, worker) for job in jobs],
    )


def ready_scopes(
    conn: sqlcipher3.Connection, stage: str, after: Sequence[tuple[str, str]]
) -> list[tuple[Scope, int]]:
    """Scopes whose live capsules are all done for the `after` (stage, version) pairs, with
    their newest seq, when `stage` has not run over that seq yet.

    Asked before every claim of `stage`, so the cheap questions come first: scopes with new
    capsules, then whether an `after` stage still has jobs pending anywhere (the scopes then
    wait for it), and only then the walk over each remaining scope's capsules."""
    heads = conn.execute("SELECT tenant, project, seq FROM capsule_heads").fetchall()
    behind = [
        (Scope(str(project), str(tenant)), int(seq))
        for tenant, project, seq in heads
        if progress(conn, stage, Scope(str(project), str(tenant))) < int(seq)
    ]
    if not behind or any(_pending(conn, name) for name, _ in after):
        return []
    waits = "".join(
        " AND NOT EXISTS (SELECT 1 FROM capsules AS c WHERE c.tenant = ? "
        "AND c.project = ? AND c.forgotten_reason IS NULL AND NOT EXISTS "
        "(SELECT 1 FROM capsule_jobs AS j WHERE j.target = c.id AND j.stage = ? "
        "AND j.version = ? AND j.state = 'done'))"
        for _ in after
    )
    found: list[tuple[Scope, int]] = []
    for scope, seq in behind:
        params = [value for pair in after for value in (scope.tenant, scope.project, *pair)]
        if conn.execute(f"SELECT 1 WHERE 1 = 1{waits}", params).fetchone() is not None:
            found.append((scope, seq))
    return found


def _pending(conn: sqlcipher3.Connection, stage: str) -> bool:
    """Whether `stage` has a job not done yet (the pending index's own condition)."""
    row = conn.execute(
        "SELECT 1 FROM capsule_jobs WHERE stage = ? AND state IN ('ready', 'running') LIMIT 1",
        (stage,),
    ).fetchone()
    return row is not None


def arm_scope(conn: sqlcipher3.Connection, stage: str, version: str, scope: Scope) -> None:
    """Make the scope's job of `stage` claimable: written if new, set ready if done."""
    target = scope_target(scope)
    conn.execute(
        "INSERT OR IGNORE INTO capsule_jobs (target, stage, version, enqueued_at) "
        "VALUES (?, ?, ?, ?)",
        (target, stage, version, time.time()),
    )
    conn.execute(
        "UPDATE capsule_jobs SET state = 'ready', attempts = 0, not_before = 0 "
        "WHERE target = ? AND stage = ? AND version = ? AND state = 'done'",
        (target, stage, version),
    )


def progress(conn: sqlcipher3.Connection, stage: str, scope: Scope) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_progress_key(stage, scope),))
    found = row.fetchone()
    return int(found[0]) if found else 0


def record_progress(conn: sqlcipher3.Connection, stage: str, scope: Scope) -> None:
    """Note that `stage` ran over the scope up to its newest capsule (in the run's transaction)."""
    row = conn.execute(
        "SELECT seq FROM capsule_heads WHERE tenant = ? AND project = ?",
        (scope.tenant, scope.project),
    ).fetchone()
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
        "SET value = excluded.value",
        (_progress_key(stage, scope), str(int(row[0]) if row else 0)),
    )


def _progress_key(stage: str, scope: Scope) -> str:
    return f"{_PROGRESS}.{stage}.{scope_target(scope)}"


def parse_scope_target(target: str) -> Scope | None:
    if not target.startswith("scope:") or "/" not in target:
        return None
    tenant, _, project = target[len("scope:") :].partition("/")
    return Scope(project, tenant)


def drop_stage_rows(conn: sqlcipher3.Connection, stages: Iterable[str]) -> None:
    """Empty the derived tables of `stages`, forget their jobs and progress; the caller holds
    the transaction and enqueues the jobs again."""
    for stage in stages:
        for table in STAGE_TABLES.get(stage, ()):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM capsule_jobs WHERE stage = ?", (stage,))
        conn.execute("DELETE FROM meta WHERE key >= ? AND key < ?", _key_range(stage))
        conn.execute("DELETE FROM meta WHERE key = ?", (f"{_PROGRESS}-enqueued.{stage}",))


def _key_range(stage: str) -> tuple[str, str]:
    prefix = f"{_PROGRESS}.{stage}."
    return prefix, prefix[:-1] + chr(ord(".") + 1)


def missing_rows(conn: sqlcipher3.Connection, stage: str, version: str) -> int:
    """Live capsules without a done job of `stage` at `version` (what a drain has left)."""
    row = conn.execute(
        "SELECT count(*) FROM capsules AS c WHERE c.forgotten_reason IS NULL AND NOT EXISTS "
        "(SELECT 1 FROM capsule_jobs AS j WHERE j.target = c.id AND j.stage = ? "
        "AND j.version = ? AND j.state = 'done')",
        (stage, version),
    ).fetchone()
    return int(row[0])
