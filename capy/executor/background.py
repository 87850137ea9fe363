"""Background jobs: calls that outlive their timeout, tracked until they end or capy shuts down.

A job keeps its pipes drained by a thread (a full pipe would freeze the program) into a buffer
holding the last `buffer_bytes`, is killed after `max_runtime_seconds`, and is terminated by
`shutdown_background()`, which an atexit hook also runs: nothing capy started outlives capy.
"""

from __future__ import annotations

import atexit
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.executor.errors import ExecutorError
from capy.executor.output import decode

if TYPE_CHECKING:
    from capy.executor.phase import Phase
    from capy.rules.views.executor import Background, ExecutorPack

_jobs: dict[int, BackgroundJob] = {}
_lock = threading.Lock()
_atexit_registered = False


@dataclass
class BackgroundJob:
    pid: int
    language: str
    sandbox_id: str
    started: float
    phase: Phase
    temp_dir: Path
    grace: float
    thread: threading.Thread | None = None
    exit_code: int | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    def output_tail(self) -> str:
        """The last `buffer_bytes` printed since the call returned (the job may still write)."""
        return decode(bytes(self.phase.pump.combined)).text


def check_capacity(limits: Background) -> None:
    with _lock:
        running = sum(1 for job in _jobs.values() if job.running)
    if running >= limits.max_jobs:
        raise ExecutorError(
            f"{running} background jobs are already running (the limit is {limits.max_jobs}); "
            "stop one before starting another"
        )


def adopt(phase: Phase, temp_dir: Path, language: str, view: ExecutorPack) -> BackgroundJob:
    """Take over a call whose timeout passed: keep draining it in a thread until it ends."""
    limits = view.limits.background
    pump = phase.pump
    pump.keep_tail = limits.buffer_bytes
    pump.cancel = None  # the call has returned: only stop_job and shutdown end the job now
    # The caller already has the output so far; the job's buffers hold what comes after.
    for buffer in (pump.stdout, pump.stderr, pump.combined):
        buffer.clear()
    job = BackgroundJob(
        pid=phase.pid,
        language=language,
        sandbox_id=phase.procs.marker,
        started=time.monotonic(),
        phase=phase,
        temp_dir=temp_dir,
        grace=view.limits.timeout.kill_grace_seconds,
    )
    deadline = job.started + limits.max_runtime_seconds
    job.thread = threading.Thread(
        target=_watch, args=(job, deadline), name=f"capy-background-{phase.pid}", daemon=True
    )
    with _lock:
        _jobs[job.pid] = job
    _register_atexit()
    job.thread.start()
    return job


def _watch(job: BackgroundJob, deadline: float) -> None:
    from capy.executor.phase import stop_and_collect

    try:
        stop = job.phase.pump.run_until(deadline)
        job.exit_code = stop_and_collect(job.phase, stop).exit_code
    finally:
        shutil.rmtree(job.temp_dir, ignore_errors=True)
        job.finished.set()


def jobs() -> list[BackgroundJob]:
    with _lock:
        return list(_jobs.values())


def job(pid: int) -> BackgroundJob | None:
    with _lock:
        return _jobs.get(pid)


def stop_job(pid: int, *, grace: float | None = None) -> bool:
    """SIGTERM the job's group, SIGKILL everything it started after the grace; False if unknown."""
    found = job(pid)
    if found is None:
        return False
    _stop(found, found.grace if grace is None else grace)
    return True


def _stop(found: BackgroundJob, grace: float) -> None:
    if found.running:
        found.phase.procs.signal_group(signal.SIGTERM)
        found.finished.wait(grace)
    if found.running:
        found.phase.procs.sweep()
    if found.thread is not None:
        found.thread.join(grace + 5)
    with _lock:
        _jobs.pop(found.pid, None)


def shutdown_background(grace: float | None = None) -> int:
    """Terminate every background job and remove its temp dir; returns how many were running."""
    pending = [found for found in jobs() if found.running]
    for found in jobs():
        _stop(found, found.grace if grace is None else grace)
    return len(pending)


def _register_atexit() -> None:
    global _atexit_registered
    with _lock:
        if _atexit_registered:
            return
        _atexit_registered = True
    atexit.register(shutdown_background)
