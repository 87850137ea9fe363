"""The job queue: leases, reclaiming a dead worker's jobs, stage order, backoff and dead jobs."""

from __future__ import annotations

import time

from capy.capsules import CapsuleDraft
from capy.capsules.sqlite import queue


def _write(capsules, count: int = 2) -> None:
    capsules.write([CapsuleDraft(kind="note", content=f"n{i}", source="cli") for i in range(count)])


def test_a_leased_job_is_nobody_elses_until_its_lease_runs_out(capsules):
    _write(capsules)
    backend = capsules.backend
    first = backend.claim("chunk", worker="a", lease_seconds=60, limit=10)
    assert len(first) == 2
    assert backend.claim("chunk", worker="b", lease_seconds=60, limit=10) == []
    later = time.time() + 61
    taken = queue.claim(capsules.conn, "chunk", worker="b", lease_seconds=60, limit=10, now=later)
    assert {job.id for job in taken} == {job.id for job in first}
    # The first worker lost its lease: finishing is refused, so the job is done once.
    assert not queue.finish(capsules.conn, first[0], "a")
    assert queue.finish(capsules.conn, taken[0], "b")


def test_a_stage_waits_for_the_stages_it_comes_after(capsules):
    _write(capsules, 1)
    backend = capsules.backend
    assert backend.claim("link", worker="w", lease_seconds=60, limit=10, after=["extract"]) == []
    [extract] = backend.claim("extract", worker="w", lease_seconds=60, limit=10)
    queue.finish(capsules.conn, extract, "w")
    assert (
        len(backend.claim("link", worker="w", lease_seconds=60, limit=10, after=["extract"])) == 1
    )


def test_failures_back_off_and_end_dead(capsules):
    _write(capsules, 1)
    backend = capsules.backend
    [job] = backend.claim("chunk", worker="w", lease_seconds=60, limit=1)
    backend.fail(job, "w", "boom", max_attempts=2, backoff=30)
    assert backend.claim("chunk", worker="w", lease_seconds=60, limit=1) == []  # waiting
    [job] = queue.claim(
        capsules.conn, "chunk", worker="w", lease_seconds=60, limit=1, now=time.time() + 31
    )
    assert job.attempts == 1
    backend.fail(job, "w", "boom again", max_attempts=2, backoff=30)
    state, error = capsules.conn.execute(
        "SELECT state, last_error FROM capsule_jobs WHERE id = ?", (job.id,)
    ).fetchone()
    assert (state, error) == ("dead", "boom again")
    from capy.capsules.versions import current_versions

    chunk = next(b for b in backend.backlog(current_versions(capsules.rules)) if b.stage == "chunk")
    assert chunk.dead == 1


def test_the_pack_sets_the_backoff_curve(capsules):
    pack = capsules.rules.view("capsules").queue
    waits = [pack.backoff_after(n) for n in range(1, 8)]
    assert waits == sorted(waits) and waits[0] == pack.backoff_seconds
    assert waits[-1] == pack.max_backoff_seconds


def _claim_link(capsules, **extra):
    return queue.claim(
        capsules.conn, "link", worker="w", lease_seconds=60, limit=10, after=["extract"], **extra
    )


def test_a_waiting_stage_looks_only_at_its_oldest_jobs(capsules):
    _write(capsules, 3)
    extracts = capsules.backend.claim("extract", worker="w", lease_seconds=60, limit=10)
    queue.finish(capsules.conn, extracts[2], "w")  # only the newest capsule is extracted
    assert _claim_link(capsules, window=2) == []  # the two oldest still wait
    [link] = _claim_link(capsules, window=3)
    assert link.target == extracts[2].target


def test_a_job_whose_dependency_is_dead_is_dead_too(capsules):
    _write(capsules, 2)
    dead, alive = capsules.backend.claim("extract", worker="w", lease_seconds=60, limit=10)
    capsules.backend.fail(dead, "w", "boom", max_attempts=1, backoff=0)
    queue.finish(capsules.conn, alive, "w")
    [link] = _claim_link(capsules, window=1)  # the dead one's link no longer holds the window
    assert link.target == alive.target
    state, error = capsules.conn.execute(
        "SELECT state, last_error FROM capsule_jobs WHERE stage = 'link' AND target = ?",
        (dead.target,),
    ).fetchone()
    assert (state, error) == ("dead", "its extract job is dead")
