"""Finding and killing everything one sandboxed call started.

A call's processes are the leader (its own session and process group), its descendants, and
descendants that escaped: a double fork re-parents a daemon, and `setsid` takes it out of the
group, so `killpg` alone misses it. Where a cgroup is usable (see `cgroups`) the call's group
lists every one of them, whatever they did. On top of that, and instead of it elsewhere, capy
makes its own process a child subreaper on Linux (prctl PR_SET_CHILD_SUBREAPER): an orphan then
re-parents to capy instead of init, so every survivor of a call is either still under the
leader or an "adopted" child of capy. Walking `/proc/<pid>/task/<tid>/children` from those roots
is proportional to the call's own tree, not to the machine's process table, which keeps the
per-call overhead small.

An adopted child is attributed to a call by its session or group id, by the call's marker
variable, or, when its marker is missing or belongs to no running call (a child can wipe or
forge its environment, never its start time), by having started while the call ran. Elsewhere
than Linux only the process group is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.executor.cgroups import CallGroup

MARKER_ENV = "CAPY_SANDBOX_ID"
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_SWEEP_ROUNDS = 50

# Every call that is running right now, so that server exit or a signal can end them all.
_live_calls: set[CallProcesses] = set()
# Popen leaders capy is running right now: never adopted strays, never reaped by waitpid here
# (that would steal their exit status from Popen). Registration happens under the same lock as
# the stray scan, so a leader that was just forked is never mistaken for an escaped process.
_live_leaders: set[int] = set()
spawn_lock = threading.RLock()


def register_leader(pid: int) -> None:
    _live_leaders.add(pid)


def start_leader(
    argv: list[str],
    *,
    stdin: int,
    env: dict[str, str],
    cwd: str,
    max_tasks: int,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen[bytes]:
    """Start a call's leader: its own session, output pipes, no inherited descriptors, the
    fork cap where the OS offers one, registered before any stray scan can see it."""
    from capy.executor.limits import nproc_limiter

    with spawn_lock:
        proc = subprocess.Popen(
            argv,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
            preexec_fn=nproc_limiter(max_tasks),
        )
        register_leader(proc.pid)
    return proc


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


# /proc is read with plain string paths: a call scans every thread of capy for children two or
# three times, and building pathlib objects for each file cost more than reading it.


def proc_info(pid: int) -> ProcInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            raw = file.read()
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
    tasks = f"/proc/{pid}/task/"
    try:
        names = os.listdir(tasks)
    except OSError:
        return found
    for name in names:
        try:
            with open(f"{tasks}{name}/children", "rb") as file:
                found.extend(int(part) for part in file.read().split())
        except (OSError, ValueError):
            continue
    return found


def marker_of(pid: int) -> str | None:
    """The marker in a process's environment; None when absent or unreadable (zombie, gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            raw = file.read()
    except OSError:
        return None
    prefix = f"{MARKER_ENV}=".encode()
    for entry in raw.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode("ascii", errors="replace")
    return None


def boot_ticks_now() -> int:
    """Now, in the clock ticks since boot that /proc/<pid>/stat uses for start times."""
    # CLOCK_BOOTTIME is Linux-only; elsewhere there is no /proc to compare with anyway.
    clock = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)
    return int(time.clock_gettime(clock) * os.sysconf("SC_CLK_TCK"))


@dataclass(eq=False)
class CallProcesses:
    """The processes of one call: its leader, its marker, its cgroup if any, and its start."""

    leader: int
    marker: str
    started_ticks: int
    group: CallGroup | None = None

    def __post_init__(self) -> None:
        with spawn_lock:
            _live_calls.add(self)

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
        marker = marker_of(info.pid)
        if marker == self.marker:
            return True
        if marker is not None and marker in _live_markers():
            return False  # another running call's: that call ends it
        # No marker, a wiped or a forged one: attribute it by its start time, which a child
        # cannot change, if it also left capy's session (capy's own helpers never do).
        return info.sid != own_sid and info.start_ticks >= self.started_ticks

    def members(self, adopted: list[int] | None = None) -> set[int]:
        """Every live process of this call that can be found right now."""
        roots = [self.leader, *(self._adopted() if adopted is None else adopted)]
        if self.group is not None:
            roots.extend(self.group.pids())
        seen: set[int] = set()
        while roots:
            pid = roots.pop()
            if pid in seen:
                continue
            seen.add(pid)
            roots.extend(children_of(pid))
        return seen

    def count(self) -> int:
        if self.group is not None:
            return self.group.task_count()
        return len(self.members())

    def over_limit(self, max_processes: int) -> bool:
        """Whether the call reached its process cap (pids.max refused a fork) or passed it."""
        if self.group is not None and self.group.refused_a_fork():
            return True
        return self.count() > max_processes

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.leader, signum)

    def sweep(self) -> int:
        """Stop, then kill, everything of this call until a pass finds nothing; reap adopted ones.

        Stopping first freezes a fork bomb: a stopped process cannot fork between the scan
        that found it and the SIGKILL. A scan is not one atomic read: a process that exits
        between the read of capy's children and the read of its own state hands its children
        to capy (the kernel does both at once) after capy's list was read, and shows up as a
        zombie with no children. So a pass that saw a process exit is always followed by one
        more, and the sweep ends only after a pass that found nothing alive and no new zombie.
        Returns how many processes were killed.
        """
        self.signal_group(signal.SIGKILL)
        if self.group is not None:
            self.group.kill()
        killed: set[int] = set()
        zombies_seen: set[int] = set()
        with spawn_lock:
            for _ in range(_SWEEP_ROUNDS):
                adopted = self._adopted()
                present = self._sweep_targets(adopted)
                # Zombies too: a zombie leader of a process whose other threads still run.
                _send(set(present), signal.SIGSTOP)
                _send(set(present), signal.SIGKILL)
                alive = {pid for pid, state in present.items() if state != "Z"}
                killed |= alive
                for pid in adopted:
                    _reap(pid)  # collect exit statuses so no stray lingers as a zombie
                new_zombies = present.keys() - alive - zombies_seen
                zombies_seen |= new_zombies
                if not alive and not new_zombies:
                    break
        return len(killed)

    def release(self) -> None:
        """The call is over (swept): stop counting it as running, remove its emptied cgroup."""
        with spawn_lock:
            _live_calls.discard(self)
        if self.group is not None:
            from capy.executor.janitor import run_later

            run_later(self.group.remove)

    def _sweep_targets(self, adopted: list[int]) -> dict[int, str]:
        """This call's processes found by one scan, zombies included, with their states."""
        found = self.members(adopted)
        if self.leader not in _live_leaders:
            found.discard(self.leader)  # already reaped by Popen; the pid may be reused
        # A leader that is still alive is killed, but Popen reaps it, not us.
        return {pid: info.state for pid in found if (info := proc_info(pid)) is not None}


def _live_markers() -> set[str]:
    with spawn_lock:
        return {call.marker for call in _live_calls}


@cache
def terminate_all_at_exit() -> None:
    """However capy's interpreter ends (a return, an exception, Ctrl-C), no call outlives it."""
    atexit.register(terminate_all)


def terminate_all() -> int:
    """Kill every process of every running call (server exit, a signal); how many calls."""
    with spawn_lock:
        calls = list(_live_calls)
    for call in calls:
        call.sweep()
        call.release()
        if call.group is not None:
            call.group.remove()  # at exit the janitor may not get to it
    return len(calls)


def _send(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def reap_session_orphans(sid: int) -> None:
    """Kill and collect capy's adopted children of session `sid` (what a killed call or helper
    left: its leader is gone, so nothing of it may live on); never one of capy's live Popen
    leaders, whose status belongs to Popen."""
    with spawn_lock:
        for pid in children_of(os.getpid()):
            info = proc_info(pid)
            if info is not None and info.sid == sid and pid not in _live_leaders:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                _reap(pid)


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
        if entry.name.isdigit() and marker_of(int(entry.name)) == marker:
            found.append(int(entry.name))
    return found
