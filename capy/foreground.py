"""Tool calls in flight in this process, so that background threads step aside for them.

A long-lived process (the MCP server) runs tool calls on worker threads while background
threads work through a backlog (the semantic embedder). On a machine with few cores a batch of
background work running beside a call slows the call: on a 2-core machine, searches fired one
after another while the embedder worked took a median of about 2x as long as with it idle.
Calls mark themselves here (`foreground_call`); background work asks `wait_until_quiet` before
each batch, so a burst of calls (an agent's turn) runs alone, and the backlog resumes in the
pause that follows. A call that arrives while a batch runs still shares the machine with that
one batch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.Condition()
_running = 0
_last_end = float("-inf")  # time.monotonic() when the last call ended
# How often a waiting background thread looks at its stop event.
_STOP_POLL_S = 0.25


@contextmanager
def foreground_call() -> Iterator[None]:
    """Mark the work inside as a call someone is waiting for."""
    global _running, _last_end
    with _state:
        _running += 1
    try:
        yield
    finally:
        with _state:
            _running -= 1
            _last_end = time.monotonic()
            _state.notify_all()


def wait_until_quiet(quiet_seconds: float, stop: threading.Event | None = None) -> None:
    """Return once no call runs and none ended in the last `quiet_seconds` (at once in a
    process that runs no calls), or when `stop` is set."""
    if quiet_seconds <= 0:
        return
    with _state:
        while stop is None or not stop.is_set():
            if _running:
                wait = _STOP_POLL_S
            else:
                wait = _last_end + quiet_seconds - time.monotonic()
                if wait <= 0:
                    return
            _state.wait(min(wait, _STOP_POLL_S))
