"""How much output a running call has produced so far, for progress reports from another thread.

Like cancellation (`capy.executor.cancel`), a meter is a context variable that worker threads
inherit from the task that started them: the MCP server sets one around a `capy_execute` call
and reads it while the call runs, to send the client progress notifications; the call's output
pump adds every chunk it reads. Outside a metered context nothing is counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class OutputMeter:
    # One writer (the pump's thread) and readers that only need a recent value: an int read
    # is atomic in CPython, so no lock is needed.
    bytes_seen: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, count: int) -> None:
        self.bytes_seen += count

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


_current: ContextVar[OutputMeter | None] = ContextVar("capy_output_meter", default=None)


def current_meter() -> OutputMeter | None:
    return _current.get()


@contextmanager
def metered(meter: OutputMeter) -> Iterator[OutputMeter]:
    """Calls started inside (in this context) count their output into `meter`."""
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)
