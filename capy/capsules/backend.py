"""What a capsule storage backend provides, so nothing above it writes SQL of its own.

The embedded default is `capy.capsules.sqlite.SqliteBackend` (SQLCipher); a PostgreSQL backend
for teams implements the same protocol later. Pipeline stages and recall reach derived tables
and the retrieval `Corpus` through the backend too, so SQLite-specific SQL stays inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from capy.capsules.chain import ChainLink
    from capy.capsules.model import Capsule, Scope
    from capy.capsules.sqlite.listing import CapsuleFilter
    from capy.capsules.sqlite.log import Appended, OutboxJob, Prepared
    from capy.capsules.sqlite.queue import Job, StageBacklog


class CapsuleLog(Protocol):
    def append(
        self, capsules: Sequence[Prepared], outbox: Sequence[OutboxJob]
    ) -> list[Appended]: ...
    def get(self, id_or_prefix: str) -> list[tuple[int, Capsule]]: ...
    def by_number(self, numbers: Iterable[int]) -> dict[int, Capsule]: ...
    def by_ids(self, ids: Iterable[str]) -> dict[str, tuple[int, Capsule]]: ...
    def scan(
        self, scope: Scope | None = None, *, after_n: int = 0, batch: int = 1000
    ) -> Iterator[tuple[int, Capsule]]: ...
    def scopes(self) -> list[Scope]: ...
    def heads(self) -> dict[Scope, tuple[int, str]]: ...
    def chain_links(self, scope: Scope) -> Iterator[ChainLink]: ...
    def forgotten_count(self, scope: Scope) -> int: ...
    def tombstone(self, n: int, capsule: Capsule, reason: str) -> None: ...
    def newest(self, wanted: CapsuleFilter) -> list[tuple[int, Capsule]]: ...
    def recorded_fingerprints(self, fingerprints: Iterable[str]) -> set[str]: ...
    def recorded_events(
        self, source: str, sessions: Iterable[str]
    ) -> set[tuple[str, str, str]]: ...
    def same_content(
        self, scope: Scope, source: str, kind: str, content: str
    ) -> list[tuple[int, Capsule]]: ...


class JobQueue(Protocol):
    def enqueue(self, jobs: Sequence[tuple[str, str, str]]) -> int: ...
    def claim(
        self,
        stage: str,
        *,
        worker: str,
        lease_seconds: float,
        limit: int,
        after: Sequence[str] = (),
    ) -> list[Job]: ...
    def fail(
        self, job: Job, worker: str, error: str, *, max_attempts: int, backoff: float
    ) -> None: ...
    def backlog(self, current: dict[str, str]) -> list[StageBacklog]: ...


class CapsuleBackend(CapsuleLog, JobQueue, Protocol):
    """The log and the queue of one store (derived tables join as the pipeline grows)."""
