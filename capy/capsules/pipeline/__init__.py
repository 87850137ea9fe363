"""The distillation pipeline: workers that turn capsules into derived rows (chunks, entities,
graph edges, summaries, vectors) through the durable job queue.

    from capy.capsules import open_capsules
    from capy.capsules.pipeline import drain, rebuild

    with open_capsules() as store:
        report = drain(store)                 # run until no job is claimable
        rebuild(store, stages=["extract"])    # drop those rows, enqueue them again from capsules

- `capy.capsules.pipeline.worker`: leases, the stage-and-finish transaction, retries, scopes.
- `capy.capsules.pipeline.versions`: the derivation versions of one run (models included).
- `capy.capsules.pipeline.background`: the bounded worker thread of a long-lived process.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from capy.capsules.pipeline.worker import DrainReport, Worker, select_stages

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore

# A deadline above this is a wall-clock time (time.time()); below, a time.monotonic() value.
_WALL_CLOCK_FROM = 1e9


def drain(
    store: CapsuleStore,
    *,
    stages: Sequence[str] | None = None,
    deadline: float | None = None,
    worker: str | None = None,
) -> DrainReport:
    """Run pipeline jobs (of `stages`, or all) until none is claimable or `deadline` passes.

    `deadline` is a `time.monotonic()` value (a `time.time()` value is understood too). Jobs
    for capsules a stage's current version has not covered (new stages, stale rows) are
    enqueued first. Raises `CapsuleError` for an unknown stage name.
    """
    if deadline is not None and deadline > _WALL_CLOCK_FROM:
        deadline = time.monotonic() + (deadline - time.time())
    return Worker(store, worker).drain(stages, deadline)


def rebuild(store: CapsuleStore, stages: Sequence[str] | None = None) -> int:
    """Drop the derived rows of `stages` (or of every stage), and of the stages that read
    them, and enqueue their jobs again from the capsules alone; the number of jobs enqueued.
    A `drain` then recomputes them."""
    from capy.capsules.sqlite import pipeline as sql
    from capy.store.database import transaction

    chosen = {stage.name for stage in select_stages(store, stages)}
    live = store.rules.view("capsules").live_stages
    while more := {s.name for s in live if set(s.after) & chosen} - chosen:
        chosen |= more  # a stage reading a rebuilt stage's rows is rebuilt too
    worker = Worker(store)
    with transaction(store.conn):
        sql.drop_stage_rows(store.conn, sorted(chosen))
    return worker.enqueue_missing([stage for stage in live if stage.name in chosen])


__all__ = ["DrainReport", "drain", "rebuild"]
