"""The capsule backend on SQLCipher: the log, the job queue and the derived tables of one file.

`SqliteBackend` binds the module functions (`log`, `queue`) to a connection, so callers use the
`capy.capsules.backend.CapsuleBackend` protocol and never the SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.capsules.chain import ChainLink
from capy.capsules.model import Capsule, Scope
from capy.capsules.sqlite import listing, log, proxied, queue
from capy.capsules.sqlite.listing import CapsuleFilter
from capy.capsules.sqlite.log import Appended, OutboxJob, Prepared
from capy.capsules.sqlite.queue import Job, StageBacklog


@dataclass
class SqliteBackend:
    conn: sqlcipher3.Connection

    # The log
    def append(self, capsules: Sequence[Prepared], outbox: Sequence[OutboxJob]) -> list[Appended]:
        return log.append(self.conn, capsules, outbox)

    def get(self, id_or_prefix: str) -> list[tuple[int, Capsule]]:
        return log.get(self.conn, id_or_prefix)

    def by_number(self, numbers: Iterable[int]) -> dict[int, Capsule]:
        return log.by_number(self.conn, numbers)

    def by_ids(self, ids: Iterable[str]) -> dict[str, tuple[int, Capsule]]:
        return log.by_ids(self.conn, ids)

    def scan(
        self, scope: Scope | None = None, *, after_n: int = 0, batch: int = 1000
    ) -> Iterator[tuple[int, Capsule]]:
        return log.scan(self.conn, scope, after_n=after_n, batch=batch)

    def scopes(self) -> list[Scope]:
        return log.scopes(self.conn)

    def heads(self) -> dict[Scope, tuple[int, str]]:
        return log.heads(self.conn)

    def chain_links(self, scope: Scope) -> Iterator[ChainLink]:
        return log.chain_links(self.conn, scope)

    def forgotten_count(self, scope: Scope) -> int:
        return log.forgotten_count(self.conn, scope)

    def tombstone(self, n: int, capsule: Capsule, reason: str) -> None:
        log.tombstone(self.conn, n, capsule, reason)

    def newest(self, wanted: CapsuleFilter) -> list[tuple[int, Capsule]]:
        return listing.newest(self.conn, wanted)

    def recorded_fingerprints(self, fingerprints: Iterable[str]) -> set[str]:
        """The proxy's message fingerprints among `fingerprints` that are in the log."""
        return proxied.recorded_fingerprints(self.conn, fingerprints)

    def same_content(
        self, scope: Scope, source: str, kind: str, content: str
    ) -> list[tuple[int, Capsule]]:
        return listing.same_content(self.conn, scope, source, kind, content)

    def recorded_events(self, source: str, sessions: Iterable[str]) -> set[tuple[str, str, str]]:
        return listing.recorded_events(self.conn, source, sessions)

    # The job queue
    def enqueue(self, jobs: Sequence[tuple[str, str, str]]) -> int:
        return queue.enqueue(self.conn, jobs)

    def claim(
        self,
        stage: str,
        *,
        worker: str,
        lease_seconds: float,
        limit: int,
        after: Sequence[str] = (),
    ) -> list[Job]:
        return queue.claim(
            self.conn, stage, worker=worker, lease_seconds=lease_seconds, limit=limit, after=after
        )

    def fail(self, job: Job, worker: str, error: str, *, max_attempts: int, backoff: float) -> None:
        queue.fail(self.conn, job, worker, error, max_attempts=max_attempts, backoff=backoff)

    def backlog(self, current: dict[str, str]) -> list[StageBacklog]:
        return queue.backlog(self.conn, current)

    def dead_jobs(self, limit: int = 10) -> list[tuple[str, str, str]]:
        """(stage, target, last error) of the newest dead jobs."""
        rows = self.conn.execute(
            "SELECT stage, target, coalesce(last_error, '') FROM capsule_jobs "
            "WHERE state = 'dead' ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [(str(s), str(t), str(e)) for s, t, e in rows]
