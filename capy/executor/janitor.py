"""Removing a call's temp dir (and its emptied cgroups) off the call's critical path.

On a disk mounted with `discard` (common on cloud VMs), rmdir alone costs ~3 ms, more than a
whole `echo` in bash; the agent should not wait for it. Removing an empty memory cgroup costs
a fraction of a millisecond more, for the same nothing. One daemon thread removes dirs in the
order calls finished; `wait_for_cleanup()` (run at exit too) blocks until the queue is empty, so
nothing is left behind when capy stops.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

_pending: queue.Queue[Path | Callable[[], None]] = queue.Queue()
_started = False
_lock = threading.Lock()


def remove_later(path: Path) -> None:
    _ensure_thread()
    _pending.put(path)


def run_later(work: Callable[[], None]) -> None:
    """Run a cleanup step that nothing waits for (it must not raise what matters)."""
    _ensure_thread()
    _pending.put(work)


def wait_for_cleanup() -> None:
    """Block until every temp dir handed over so far is gone."""
    if _started:
        _pending.join()


def _work() -> None:
    while True:
        item = _pending.get()
        try:
            if isinstance(item, Path):
                shutil.rmtree(item, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    item()
        finally:
            _pending.task_done()


def _ensure_thread() -> None:
    global _started
    with _lock:
        if _started:
            return
        threading.Thread(target=_work, name="capy-temp-janitor", daemon=True).start()
        atexit.register(wait_for_cleanup)
        _started = True
