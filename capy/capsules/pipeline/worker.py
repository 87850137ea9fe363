"""The pipeline worker: claims jobs with a lease, runs each stage in the transaction that marks
its job done, retries failures with the pack's backoff, and arms per-scope stages once their
`after` stages are done for every capsule of the scope.

A worker killed mid-job loses nothing: its transaction never commits, so the job is still
`running` with a lease that runs out, after which any worker claims it again. A worker that
lost its lease (it was too slow) finds `finish` refused and rolls its rows back, so a job's rows
are written exactly once.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from capy.capsules.model import CapsuleError
from capy.capsules.pipeline.versions import RunModels, find_models, run_versions
from capy.capsules.sqlite import pipeline as sql
from capy.capsules.sqlite import queue
from capy.capsules.stages import StageContext, stage_module
from capy.store.database import transaction

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore
    from capy.capsules.model import Capsule
    from capy.capsules.sqlite.queue import Job
    from capy.rules.views.capsules import Stage


class LostLease(Exception):
    """Another worker holds the job now: this run's rows must not land."""


@dataclass
class DrainReport:
    worker: str
    done: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    lost: int = 0  # jobs whose lease ran out before they finished (another worker took them)
    enqueued: int = 0  # jobs written for capsules a stage version had not covered (stale, new)
    stopped_by_deadline: bool = False
    seconds: float = 0.0

    @property
    def total_done(self) -> int:
        return sum(self.done.values())


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def select_stages(store: CapsuleStore, names: Sequence[str] | None) -> list[Stage]:
    live = list(store.rules.view("capsules").live_stages)
    if names is None:
        return live
    known = {stage.name for stage in live}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise CapsuleError(
            f"no pipeline stage named {', '.join(map(repr, unknown))}: use one of "
            f"{', '.join(stage.name for stage in live)}"
        )
    return [stage for stage in live if stage.name in names]


class Worker:
    def __init__(
        self,
        store: CapsuleStore,
        worker: str | None = None,
        *,
        lease_seconds: float | None = None,
        models: RunModels | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.conn = store.conn
        self.pack = store.rules.view("capsules")
        self.id = worker or default_worker_id()
        self.lease_seconds = lease_seconds or self.pack.queue.lease_seconds
        self.models = models if models is not None else find_models(store)
        self.versions = run_versions(store, self.models)
        # Set by a process that is stopping: the worker ends after the job in progress.
        self.stop = stop

    def drain(
        self, stages: Sequence[str] | None = None, deadline: float | None = None
    ) -> DrainReport:
        started = time.monotonic()
        report = DrainReport(self.id)
        chosen = select_stages(self.store, stages)
        report.enqueued = self.enqueue_missing(chosen)
        while True:
            worked = 0
            for stage in chosen:
                if self._should_stop(deadline):
                    report.stopped_by_deadline = True
                    break
                worked += self._round(stage, report, deadline)
            if report.stopped_by_deadline or worked == 0:
                break
        report.seconds = time.monotonic() - started
        return report

    def enqueue_missing(self, stages: Sequence[Stage]) -> int:
        with transaction(self.conn):
            return sum(
                sql.enqueue_missing(self.conn, stage.name, self.versions[stage.name])
                for stage in stages
                if stage.per == "capsule"
            )

    def _round(self, stage: Stage, report: DrainReport, deadline: float | None) -> int:
        if stage.per == "scope":
            self._arm_scopes(stage)
        jobs = queue.claim(
            self.conn,
            stage.name,
            worker=self.id,
            lease_seconds=self.lease_seconds,
            limit=self.pack.queue.claim_batch,
            after=stage.after if stage.per == "capsule" else (),
            window=self.pack.queue.claim_window,
        )
        if stage.per == "capsule":
            self._run_capsules(stage, jobs, report, deadline)
            return len(jobs)
        for index, job in enumerate(jobs):
            if self._should_stop(deadline):
                self._release(jobs[index:], report)
                break
            self._run(stage, job, report)
        return len(jobs)

    def _release(self, jobs: Sequence[Job], report: DrainReport) -> None:
        with transaction(self.conn):
            sql.release(self.conn, jobs, self.id)
        report.stopped_by_deadline = True

    def _should_stop(self, deadline: float | None) -> bool:
        return _past(deadline) or (self.stop is not None and self.stop.is_set())

    def _arm_scopes(self, stage: Stage) -> None:
        after = [(name, self.versions[name]) for name in stage.after if name in self.versions]
        with transaction(self.conn):
            for scope, _ in sql.ready_scopes(self.conn, stage.name, after):
                sql.arm_scope(self.conn, stage.name, self.versions[stage.name], scope)

    def _context(self, stage: Stage, job: Job) -> StageContext:
        return StageContext(
            self.conn,
            self.store.rules,
            stage.name,
            # Rows carry the version this run works to (a job written at capture time knows
            # the packs, not the models this run found), so a rebuild writes the same rows.
            self.versions.get(stage.name, job.version),
            llm=self.models.llm,
            embedder=self.models.embedder,
        )

    def _run(self, stage: Stage, job: Job, report: DrainReport) -> None:
        """One per-scope job, in its own transaction."""
        module = stage_module(stage.name)
        self._attempt(
            stage, job, report, lambda: self._run_scope(module, self._context(stage, job), job)
        )

    def _attempt(
        self, stage: Stage, job: Job, report: DrainReport, action: Callable[[], None]
    ) -> None:
        """Run one job's `action` (which commits its rows and the job), and count the outcome."""
        try:
            action()
        except LostLease:
            report.lost += 1
            return
        except Exception as error:  # a stage's failure is the job's, never the worker's
            with transaction(self.conn):
                self._fail(job, error)
            report.failed[stage.name] += 1
            return
        report.done[stage.name] += 1

    def _run_capsules(
        self, stage: Stage, jobs: Sequence[Job], report: DrainReport, deadline: float | None
    ) -> None:
        """Run claimed per-capsule jobs, many to a transaction: a commit (and the flush of the
        FTS tables it brings) per job was most of a drain's time. The transaction commits every
        `queue.commit_seconds`; a worker killed mid-way loses only uncommitted jobs, which any
        worker claims again once their leases run out. A job that fails (or lost its lease)
        rolls the batch back and is recorded as failed (or lost) on its own; the jobs before it
        run again in the next batch. (No savepoint per job: FTS5 flushes its pending rows at
        each one.)"""
        module = stage_module(stage.name)
        prepared: dict[int, Any] = {}
        if jobs and hasattr(module, "prepare"):
            found = self.store.backend.by_ids(job.target for job in jobs)
            prepared = _prepare(module, self._context(stage, jobs[0]), list(found.values()))
        pending = list(jobs)
        while pending:
            if self._should_stop(deadline):
                self._release(pending, report)
                return
            ran, failing = 0, None
            try:
                with transaction(self.conn):
                    began = time.monotonic()
                    # Read under the write lock: a capsule forgotten meanwhile gets no rows.
                    found = self.store.backend.by_ids(job.target for job in pending)
                    for index, job in enumerate(pending):
                        failing = index
                        self._run_capsule(module, self._context(stage, job), job, found, prepared)
                        ran, failing = index + 1, None
                        spent = time.monotonic() - began
                        if spent >= self.pack.queue.commit_seconds or self._should_stop(deadline):
                            break
            except Exception as error:
                if failing is None:  # the commit itself failed: not one job's doing
                    raise
                job = pending.pop(failing)
                self._attempt(stage, job, report, partial(_raise, error))
                continue
            report.done[stage.name] += ran
            del pending[:ran]

    def _run_capsule(
        self,
        module: Any,
        context: StageContext,
        job: Job,
        found: dict[str, tuple[int, Capsule]],
        prepared: dict[int, Any],
    ) -> None:
        """One job's rows and its `done`, in the caller's transaction."""
        if job.target in found:
            n, capsule = found[job.target]
            extra = {"prepared": prepared.get(n)} if hasattr(module, "prepare") else {}
            module.run(context, n, capsule, **extra)
        self._finish(job)

    def _run_scope(self, module, context: StageContext, job: Job) -> None:  # type: ignore[no-untyped-def]
        scope = sql.parse_scope_target(job.target)
        if scope is None:
            raise CapsuleError(f"job {job.id} has no scope target: {job.target[:80]!r}")
        if hasattr(module, "prepare_scope"):
            module.prepare_scope(context, scope)  # slow work (a chat request), outside the lock
        with transaction(self.conn):
            module.run_scope(context, scope)
            sql.record_progress(self.conn, job.stage, scope)
            self._finish(job)

    def _finish(self, job: Job) -> None:
        if queue.finish(self.conn, job, self.id):
            sql.supersede(self.conn, job)
        elif queue.exists(self.conn, job):
            raise LostLease()
        # Else a job of the same target and stage at another version, run earlier in this
        # batch, superseded it: the rows are that run's, at the version this worker writes.

    def _fail(self, job: Job, error: Exception) -> None:
        from capy.security.redaction import redact_text

        message = redact_text(
            f"{type(error).__name__}: {error}", secrets=self.store.rules.view("secrets")
        )
        queue.fail(
            self.conn,
            job,
            self.id,
            message,
            max_attempts=self.pack.queue.max_attempts,
            backoff=self.pack.queue.backoff_after(job.attempts + 1),
            in_transaction=True,
        )


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _prepare(module: Any, context: StageContext, items: list[tuple[int, Capsule]]) -> dict:
    """A stage's slow work for a whole claim (embedding), outside the write lock. A failure
    here leaves each job to do its own work, and to fail on its own."""
    try:
        return dict(module.prepare(context, items))
    except Exception:
        return {}


def _raise(error: Exception) -> None:
    raise error
