"""A cgroup per call: the one handle on a call's processes that no child can shed.

A child can leave its session (`setsid`), re-parent itself (double fork) and rewrite its
environment (`env -i`, a forged marker), but it cannot leave its cgroup without write access to
another one. Where a cgroup hierarchy is writable, capy makes a group per call in each of them:
the cgroup2 tree (tracking, and `cgroup.kill`, which kills a whole group at once), the v1
`pids` controller (`pids.max`: fork fails past the cap, exactly) and the v1 `memory` controller
(a memory cap). A cgroup2 tree with the `pids` or `memory` controller delegated serves those
too. What is writable is found at run time, once per process, by a real trial: some hosts mount
cgroups read-only, some delegate only part of the tree, some have none (macOS, Windows).

The child joins its groups before it runs any of the caller's code: the command is started
through `/bin/sh`, which writes itself into each group's `cgroup.procs` and then `exec`s the
program. That costs a fraction of a millisecond, where a Python `preexec_fn` (which forces a
full fork of capy's process instead of a vfork) costs several.

Groups live under `capy-<pid>` inside capy's own cgroup, so a capy that was killed outright
leaves a group whose owner is gone; the next capy to start kills what is in it and removes it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

_MOUNTINFO = Path("/proc/self/mountinfo")
_OWN_CGROUPS = Path("/proc/self/cgroup")
SHELL = "/bin/sh"
# Joins every group named before `--`, then becomes the program. A join that fails stops the
# call (fail closed): the sandbox promised to track it.
JOIN_LOOP = (
    'while [ "$1" != -- ]; do { echo 0 > "$1"; } 2>/dev/null || '
    '{ echo "capy: the call could not enter its cgroup $1" >&2; exit 125; }; shift; done; '
)
_JOIN_SCRIPT = JOIN_LOOP + 'shift; exec "$@"'
_GROUP_PREFIX = "capy-"
_EMPTY_WAIT_S = 2.0
# One search at a time: a server's first call and the spawners it starts beside it ask at
# once, and a second search clears the home (see `_find`) with the groups and the join probe
# the first already made in it, killing or stranding their processes.
_finding = threading.Lock()


class Kind(StrEnum):
    UNIFIED = "cgroup2"
    PIDS = "pids"
    MEMORY = "memory"


@dataclass(frozen=True)
class Hierarchy:
    kind: Kind
    home: Path  # capy-<pid> inside capy's own cgroup of this hierarchy

    def controllers(self) -> frozenset[str]:
        """What a call's group can limit here: the v1 controller, or cgroup2's delegated ones."""
        if self.kind is not Kind.UNIFIED:
            return frozenset({self.kind.value})
        try:
            return frozenset((self.home / "cgroup.controllers").read_text().split())
        except OSError:
            return frozenset()


def _own_paths() -> dict[str, str]:
    """capy's cgroup per hierarchy: 'cgroup2' for the unified one, else each v1 controller."""
    found: dict[str, str] = {}
    for line in _OWN_CGROUPS.read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [Kind.UNIFIED.value]:
            found[name] = path
    return found


def _mounts() -> dict[str, Path]:
    """The directory of capy's own cgroup in each mounted hierarchy capy can use."""
    own = _own_paths()
    dirs: dict[str, Path] = {}
    for line in _MOUNTINFO.read_text().splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, mountpoint, fstype, options = fields[3], fields[4], tail[0], tail[2].split(",")
        if fstype == "cgroup2":
            names = [Kind.UNIFIED.value]
        elif fstype == "cgroup":
            names = [name for name in (Kind.PIDS.value, Kind.MEMORY.value) if name in options]
        else:
            continue
        root = root.rstrip("/")
        for name in names:
            path = own.get(name)
            # A container sees only its part of the tree: the mount's root must hold capy's group.
            if path is None or name in dirs or not (path + "/").startswith(root + "/"):
                continue
            relative = path[len(root) :].lstrip("/")
            dirs[name] = Path(mountpoint.replace("\\040", " ")) / relative
    return dirs


def hierarchies() -> tuple[Hierarchy, ...]:
    """The hierarchies where capy can make a group and move a process into it (tried once;
    threads asking meanwhile wait for that trial)."""
    with _finding:
        return _find()


@cache
def _find() -> tuple[Hierarchy, ...]:
    try:
        candidates = _mounts()
    except (OSError, ValueError):
        return ()
    usable = []
    for name, own_dir in candidates.items():
        home = own_dir / f"{_GROUP_PREFIX}{os.getpid()}"
        # One already there is no group of this process: a capy killed outright under the same
        # pid left it (its calls' orphans may still run in it), or a call planted it with its
        # own limits and members. Nothing in it is trusted: emptied, removed, made afresh.
        _clear(home)
        try:
            home.mkdir()
        except OSError:
            continue
        _remove_stale_siblings(own_dir)
        usable.append(Hierarchy(Kind(name), home))
    found = tuple(hierarchy for hierarchy in usable if _can_join(hierarchy))
    for hierarchy in usable:
        if hierarchy not in found:
            _rmdir(hierarchy.home)
    if found:
        atexit.register(release_home)
    return found


def _can_join(hierarchy: Hierarchy) -> bool:
    """Move a throwaway shell into a probe group: writable files do not prove delegation."""
    probe = hierarchy.home / "probe"
    try:
        probe.mkdir(exist_ok=True)
        done = subprocess.run(
            [SHELL, "-c", _JOIN_SCRIPT, "capy-probe", str(probe / "cgroup.procs"), "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
        )
        return done.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        _rmdir(probe)


def _remove_stale_siblings(own_dir: Path) -> None:
    """Empty and remove the groups of a capy that died without cleaning up (kill -9, OOM)."""
    with contextlib.suppress(OSError):
        for entry in own_dir.iterdir():
            owner = entry.name.removeprefix(_GROUP_PREFIX)
            if entry.name == owner or not owner.isdigit() or pid_alive(int(owner)):
                continue
            _clear(entry)


def _clear(group: Path) -> None:
    """Kill what a group and every group below it hold, deepest first, then remove them all
    (nothing when it does not exist)."""
    with contextlib.suppress(OSError):
        for child in group.iterdir():
            if child.is_dir():
                _clear(child)
        _kill_group(group)
        _rmdir(group)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one of another user's counts: not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _members(group: Path) -> list[int]:
    try:
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_group(group: Path) -> None:
    """SIGKILL every process in the group; cgroup.kill does it atomically where it exists.

    An empty group is left alone: nothing can enter it but a process capy moves there, and a
    write to cgroup.kill takes the same kernel lock as joining a group, which waits for an RCU
    grace period (15-25 ms here) when no other cgroup write came just before it."""
    if not _members(group):
        return
    kill_file = group / "cgroup.kill"
    if kill_file.exists():
        with contextlib.suppress(OSError):
            kill_file.write_text("1")
    deadline = time.monotonic() + _EMPTY_WAIT_S
    while (members := _members(group)) and time.monotonic() < deadline:
        # v1 has no cgroup.kill: stop all first so none forks between the read and the kill.
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)
        time.sleep(0.002)


def _counter(path: Path, name: str) -> int:
    """One `name value` line of a cgroup's events file; 0 when unreadable."""
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _rmdir(group: Path) -> None:
    with contextlib.suppress(OSError):
        group.rmdir()


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


@dataclass
class CallGroup:
    """One call's groups, one per usable hierarchy, with whatever limits each can enforce."""

    groups: dict[Kind, Path]
    pids_file: Path | None = None
    memory_events: Path | None = None

    @property
    def join_files(self) -> list[str]:
        return [str(group / "cgroup.procs") for group in self.groups.values()]

    @property
    def tracker(self) -> Path:
        """The group whose member list is read: any holds them all, cgroup2's is preferred."""
        return self.groups.get(Kind.UNIFIED) or next(iter(self.groups.values()))

    def wrap(self, argv: list[str]) -> list[str]:
        return [SHELL, "-c", _JOIN_SCRIPT, "capy-sandbox", *self.join_files, "--", *argv]

    def pids(self) -> list[int]:
        return _members(self.tracker)

    def task_count(self) -> int:
        """Tasks (threads included) when a pids controller counts them, else processes."""
        if self.pids_file is not None:
            with contextlib.suppress(OSError, ValueError):
                return int(self.pids_file.read_text())
        return len(self.pids())

    def refused_a_fork(self) -> bool:
        """Whether pids.max refused a fork: the call reached its process cap."""
        if self.pids_file is None:
            return False
        return _counter(self.pids_file.with_name("pids.events"), "max") > 0

    def out_of_memory(self) -> bool:
        """Whether the kernel's OOM killer ended a process of this call for its memory cap."""
        if self.memory_events is None:
            return False
        return _counter(self.memory_events, "oom_kill") > 0

    def kill(self) -> None:
        for group in self.groups.values():
            _kill_group(group)

    def remove(self) -> None:
        """Remove the (emptied) groups; one still busy stays until capy's exit removes it."""
        for group in self.groups.values():
            _rmdir(group)


def call_group(marker: str, *, max_tasks: int, max_memory_bytes: int | None) -> CallGroup | None:
    """Make the groups for one call, or None where no hierarchy is usable (then the caller
    falls back to the subreaper and the process-tree scan)."""
    usable = hierarchies()
    if not usable:
        return None
    call = CallGroup({})
    for hierarchy in usable:
        group = hierarchy.home / marker
        try:
            group.mkdir()
        except OSError:
            continue
        call.groups[hierarchy.kind] = group
        controllers = hierarchy.controllers()
        can_cap = call.pids_file is None and "pids" in controllers
        if can_cap and _write(group / "pids.max", str(max_tasks)):
            call.pids_file = group / "pids.current"
        if call.memory_events is None and max_memory_bytes and "memory" in controllers:
            call.memory_events = _limit_memory(hierarchy.kind, group, max_memory_bytes)
    if not call.groups:
        return None
    return call


def _limit_memory(kind: Kind, group: Path, limit: int) -> Path | None:
    if kind is Kind.UNIFIED:
        if not _write(group / "memory.max", str(limit)):
            return None
        _write(group / "memory.swap.max", "0")  # the cap is not a push into swap
        return group / "memory.events"
    if not _write(group / "memory.limit_in_bytes", str(limit)):
        return None
    # Where swap accounting is on, memory plus swap gets the same cap.
    _write(group / "memory.memsw.limit_in_bytes", str(limit))
    return group / "memory.oom_control"


def release_home() -> None:
    """At exit: kill what any call group still holds, then remove them and capy's own dir."""
    for hierarchy in hierarchies():
        with contextlib.suppress(OSError):
            for group in hierarchy.home.iterdir():
                if group.is_dir():
                    _kill_group(group)
                    _rmdir(group)
        _rmdir(hierarchy.home)
