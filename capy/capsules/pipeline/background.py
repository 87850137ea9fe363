"""The pipeline worker of a long-lived process (`capy serve`): one daemon thread with its own
connection, draining in bounded rounds (the pack's `worker.round_seconds`), sleeping when idle
(`worker.idle_seconds`), stopping cleanly when asked (waiting at most `worker.stop_seconds`).

It never runs on a tool call's path: tool calls use their own connections, and the worker holds
the write lock only for short transactions (about the pack's `queue.commit_seconds`). A capsule
log that does not exist yet is not created; the thread looks again after its idle sleep.
Failures are logged, never raised.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

logger = logging.getLogger("capy.capsules.pipeline")
# Until the pack is read (the first round), how long stopping may wait.
_DEFAULT_STOP_S = 5.0
# The first round waits this long: the server's own start-up and first tool calls do not share
# the interpreter with the pipeline's imports, and a client that leaves at once costs nothing.
FIRST_ROUND_AFTER_S = 3.0


class BackgroundPipeline:
    def __init__(
        self, project_dir: Path, *, first_round_after: float = FIRST_ROUND_AFTER_S
    ) -> None:
        self.project_dir = project_dir
        self.first_round_after = first_round_after
        self._stop = threading.Event()
        self._stop_seconds = _DEFAULT_STOP_S
        self._thread = threading.Thread(target=self._loop, name="capy-pipeline", daemon=True)
        self.rounds = 0
        self.jobs_done = 0

    def start(self) -> BackgroundPipeline:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the thread to end after its current job, and wait a bounded time for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self._stop_seconds)

    def _loop(self) -> None:
        store = None
        self._stop.wait(self.first_round_after)
        try:
            while not self._stop.is_set():
                if store is None:
                    store = self._open()
                idle = self._round(store) if store is not None else _DEFAULT_STOP_S
                if idle:
                    self._stop.wait(idle)
        finally:
            if store is not None:
                store.close()

    def _open(self):  # type: ignore[no-untyped-def]
        from capy.capsules import open_capsules
        from capy.capsules.location import locate_capsules

        try:
            if not locate_capsules(None, self.project_dir).path.exists():
                return None
            return open_capsules(project_dir=self.project_dir, notify=logger.warning)
        except Exception:  # the server goes on without a pipeline; the next round retries
            logger.warning("the capsule pipeline could not open the capsule log", exc_info=True)
            return None

    def _round(self, store) -> float:  # type: ignore[no-untyped-def]
        """One bounded drain; how long to sleep after it (0: more work waits)."""
        from capy.capsules.pipeline.worker import Worker

        worker_pack = store.rules.view("capsules").worker
        self._stop_seconds = worker_pack.stop_seconds
        try:
            worker = Worker(store, stop=self._stop)
            report = worker.drain(deadline=time.monotonic() + worker_pack.round_seconds)
        except Exception:
            logger.warning("a capsule pipeline round failed", exc_info=True)
            return worker_pack.idle_seconds
        self.rounds += 1
        self.jobs_done += report.total_done
        return 0.0 if report.stopped_by_deadline else worker_pack.idle_seconds


def start_background_pipeline(project_dir: Path) -> BackgroundPipeline:
    return BackgroundPipeline(project_dir).start()
