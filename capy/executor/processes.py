"""Finding and killing everything one sandboxed call started, without cgroups.

A call's processes are the leader (its own session and process group), its descendants, and
descendants that escaped: a double fork re-parents a daemon, and `setsid` takes it out of the
group, so `killpg` alone misses it. On Linux capy makes its own process a child subreaper
(prctl PR_SET_CHILD_SUBREAPER): an orphan then re-parents to capy instead of init, so every
survivor of a call is either still under the leader or an "adopted" child of capy. Walking
`/proc/<pid>/task/<tid>/children` from those roots is proportional to the call's own tree, not
to the machine's process table, which keeps the per-call overhead small.

Adopted children are attributed to a call by the marker variable in their environment, by
session or group id, or, when a process wiped its environment and left the session, by having
started while the call ran. Elsewhere than Linux only the process group is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MARKER_ENV = "CAPY_SANDBOX_ID"
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_SWEEP_ROUNDS = 50

# Popen leaders capy is running right now: never adopted strays, never reaped by waitpid here
# (that would steal their exit status from Popen). Registration happens under the same lock as
# the stray scan, so a leader that was just forked is never mistaken for an escaped process.
_live_leaders: set[int] = set()
spawn_lock = threading.RLock()


def register_leader(pid: int) -> None:
    _live_leaders.add(pid)


def forget_leader(pid: int) -> None:
    _live_leaders.discard(pid)


@cache
def enable_subreaper() -> bool:
    """Make this process the reaper of orphans from its descendants; False where impossible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start_ticks: int


def proc_info(pid: int) -> ProcInfo | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return ProcInfo(
            pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.extend(int(part) for part in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def environ_has(pid: int, marker: str) -> bool | None:
    """True or False when the environment is readable, None when it is not (zombie, gone)."""
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    if not raw:
        return None
    return f"{MARKER_ENV}={marker}".encode() in raw.split(b"\0")


def boot_ticks_now() -> int:
    """Now, in the clock ticks since boot that /proc/<pid>/stat uses for start times."""
    # CLOCK_BOOTTIME is Linux-only; elsewhere there is no /proc to compare with anyway.
    clock = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)
    return int(time.clock_gettime(clock) * os.sysconf("SC_CLK_TCK"))


@dataclass
class CallProcesses:
    """The processes of one call: its leader, its marker, and the time window it ran in."""

    leader: int
    marker: str
    started_ticks: int
    ended_ticks: int | None = None

    def _adopted(self) -> list[int]:
        """Children of capy that escaped this call's tree (see the module docstring)."""
        own_sid = os.getsid(0)
        strays = []
        for pid in children_of(os.getpid()):
            if pid in _live_leaders:
                continue
            info = proc_info(pid)
            if info is not None and self._belongs(info, own_sid):
                strays.append(pid)
        return strays

    def _belongs(self, info: ProcInfo, own_sid: int) -> bool:
        if self.leader in (info.sid, info.pgid):
            return True
        marked = environ_has(info.pid, self.marker)
        if marked is not None:
            return marked
        # Environment wiped or a zombie: attribute it by time, if it also left capy's session.
        ended = self.ended_ticks if self.ended_ticks is not None else boot_ticks_now()
        return info.sid != own_sid and self.started_ticks <= info.start_ticks <= ended + 1

    def members(self, adopted: list[int] | None = None) -> set[int]:
        """Every live process of this call that can be found right now."""
        roots = [self.leader, *(self._adopted() if adopted is None else adopted)]
        seen: set[int] = set()
        while roots:
            pid = roots.pop()
            if pid in seen:
                continue
            seen.add(pid)
            roots.extend(children_of(pid))
        return seen

    def count(self) -> int:
        return len(self.members())

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.leader, signum)

    def sweep(self) -> int:
        """Stop, then kill, everything of this call until nothing is left; reap adopted ones.

        Stopping first freezes a fork bomb: a stopped process cannot fork between the scan
        that found it and the SIGKILL. Returns how many processes were killed.
        """
        self.signal_group(signal.SIGKILL)
        killed: set[int] = set()
        with spawn_lock:
            for _ in range(_SWEEP_ROUNDS):
                adopted = self._adopted()
                found = self._sweep_targets(adopted)
                if found:
                    _send(found, signal.SIGSTOP)
                    _send(found, signal.SIGKILL)
                    killed |= found
                for pid in adopted:
                    _reap(pid)  # collect exit statuses so no stray lingers as a zombie
                if not found:
                    break
        return len(killed)

    def _sweep_targets(self, adopted: list[int]) -> set[int]:
        found = self.members(adopted)
        if self.leader not in _live_leaders:
            found.discard(self.leader)  # already reaped by Popen; the pid may be reused
        # A leader that is still alive is killed, but Popen reaps it, not us.
        return {pid for pid in found if (info := proc_info(pid)) and info.state != "Z"}


def _send(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _reap(pid: int) -> None:
    deadline = time.monotonic() + 0.5
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.002)


def marked_processes(marker: str) -> list[int]:
    """Every process on the machine whose environment carries this marker (a full /proc scan)."""
    found = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and environ_has(int(entry.name), marker):
            found.append(int(entry.name))
    return found
