"""Read a child's stdout and stderr together, until it exits, a deadline passes or a cap is hit.

Both pipes go through one selector, so a child that fills stderr while capy waits on stdout
cannot deadlock. A pidfd (Linux) in the same selector wakes the loop the moment the leader
exits, so a short call pays no polling delay; elsewhere the loop polls every few milliseconds.
Whatever stops the loop, what the child already wrote is read first: a call killed for its
process cap or cancelled still returns what it printed.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from enum import StrEnum

from capy.executor.meter import current_meter

_READ_SIZE = 65536
_POLL_WITHOUT_PIDFD = 0.01
# How often a running call's process tree is counted against the process limit.
_WATCH_INTERVAL = 0.25
# How soon a cancelled call notices (the event cannot wake the selector itself).
_CANCEL_POLL = 0.05


class Stop(StrEnum):
    EXITED = "exited"
    DEADLINE = "deadline"
    OUTPUT_CAP = "output-cap"
    PROCESS_LIMIT = "process-limit"
    CANCELLED = "cancelled"


class Pump:
    """Accumulates output; `combined` keeps the order in which the two streams arrived."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        *,
        cap_bytes: int,
        over_process_limit: Callable[[], bool],
        cancel: threading.Event | None = None,
    ) -> None:
        self.proc = proc
        self.cap_bytes = cap_bytes
        self.over_process_limit = over_process_limit
        self.cancel = cancel
        self.meter = current_meter()
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.combined = bytearray()
        self.total_bytes = 0
        self.keep_tail: int | None = None
        self._selector = selectors.DefaultSelector()
        self._open = 0
        for stream, sink in ((proc.stdout, self.stdout), (proc.stderr, self.stderr)):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                self._selector.register(stream.fileno(), selectors.EVENT_READ, sink)
                self._open += 1
        self._pidfd = _open_pidfd(proc.pid)
        if self._pidfd is not None:
            self._selector.register(self._pidfd, selectors.EVENT_READ, None)
        self._next_watch = time.monotonic() + _WATCH_INTERVAL

    def run_until(self, deadline: float | None) -> Stop:
        """Pump until the leader has exited and both pipes are drained, or something stops it."""
        stop = self._pump(deadline)
        if stop is not Stop.OUTPUT_CAP:
            self.drain()
        return stop

    def _pump(self, deadline: float | None) -> Stop:
        while True:
            if self.proc.poll() is not None:
                return Stop.EXITED
            if self.cancel is not None and self.cancel.is_set():
                return Stop.CANCELLED
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return Stop.DEADLINE
            if now >= self._next_watch:
                self._next_watch = now + _WATCH_INTERVAL
                if self.over_process_limit():
                    return Stop.PROCESS_LIMIT
            wait = self._next_watch - now
            if deadline is not None:
                wait = min(wait, deadline - now)
            if self._pidfd is None:
                wait = min(wait, _POLL_WITHOUT_PIDFD)
            if self.cancel is not None:
                wait = min(wait, _CANCEL_POLL)
            if self._read_ready(max(wait, 0)):
                return Stop.OUTPUT_CAP

    def _read_ready(self, wait: float) -> bool:
        """Read whatever is ready; True when the output cap was passed."""
        for key, _ in self._selector.select(wait):
            if key.data is None:
                continue  # the pidfd: the leader exited, the next poll() sees it
            if self._read_one(key.fd, key.data):
                return True
        return False

    def _read_one(self, fd: int, sink: bytearray) -> bool:
        try:
            chunk = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self._selector.unregister(fd)
            self._open -= 1
            return False
        self.total_bytes += len(chunk)
        if self.meter is not None:
            self.meter.add(len(chunk))
        for buffer in (sink, self.combined):
            buffer += chunk
            if self.keep_tail is not None and len(buffer) > self.keep_tail:
                del buffer[: len(buffer) - self.keep_tail]
        return self.keep_tail is None and self.total_bytes > self.cap_bytes

    def drain(self) -> None:
        """Take what is already in the pipes without waiting for EOF.

        A leftover background process may hold the pipes open forever; it is killed next, and
        waiting for its EOF would turn every `cmd &` into a timeout.
        """
        for _ in range(1024):
            ready = [key for key, _ in self._selector.select(0) if key.data is not None]
            if not ready:
                return
            for key in ready:
                if self._read_one(key.fd, key.data):
                    return

    def close(self) -> None:
        self._selector.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None
