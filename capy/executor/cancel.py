"""Cancelling a running call from another thread: an MCP `notifications/cancelled`, a shutdown.

A call started while a cancellation event is current (a context variable, which worker threads
inherit from the task that started them) watches that event; when it is set the call's whole
process tree is killed and the call returns with `killed_reason` "cancelled".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[threading.Event | None] = ContextVar("capy_cancel", default=None)


def current_cancel() -> threading.Event | None:
    return _current.get()


@contextmanager
def cancellable(event: threading.Event) -> Iterator[threading.Event]:
    """Calls started inside (in this context) stop when `event` is set."""
    token = _current.set(event)
    try:
        yield event
    finally:
        _current.reset(token)
