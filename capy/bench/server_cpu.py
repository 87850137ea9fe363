"""CPU time a server process spends on one tool call, from outside it.

Wall time through a tool call on a shared 2-core machine is mostly waiting to be scheduled: the
bare SDK round trip, a no-op, measured 2.2 ms on a quiet machine and 12 ms at a load of 11, so
a ratio of wall times says more about the load than about capy. The CPU the server process
spent from just before a request to its reply moves far less. Linux keeps each thread's CPU
time in nanoseconds (`/proc/PID/task/TID/schedstat`, first field); a process's is the sum over
its threads. Elsewhere, or for a thread that ended between two readings, there is no figure.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def child_with(marker: bytes) -> int | None:
    """The pid of a process this one started whose command line holds `marker` (the server an
    SDK client spawned), or None."""
    me = str(os.getpid())
    if not _PROC.is_dir():
        return None
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # ended since the listing, or not ours to read
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == me and marker in command:
            return int(entry.name)
    return None


def cpu_ns(pid: int | None) -> int | None:
    """CPU nanoseconds all live threads of `pid` have used, or None when unknown."""
    if pid is None:
        return None
    total = 0
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that ended: its share is gone
            return None
    return total


class CallCpu:
    """CPU milliseconds of one server process per call, sampled around each call."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self._before: int | None = None

    def start(self) -> None:
        self._before = cpu_ns(self.pid)

    def stop(self) -> float | None:
        after = cpu_ns(self.pid)
        if self._before is None or after is None or after < self._before:
            return None  # a thread ended between the readings: no honest figure
        return (after - self._before) / 1e6
