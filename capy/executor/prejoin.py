"""A spawner that has already entered its cgroups, kept ready by a long-lived process.

Moving a process into a cgroup (the write to `cgroup.procs` that `cgroups` has every call's
first process make) takes the kernel's cgroup-threadgroup lock for writing, which waits for an
RCU grace period unless the hierarchy was mounted with `favordynmods`. Calls made back to back
share one grace period; calls spaced out as an agent makes them each wait a whole one: 15-25 ms
measured here on a 2-core machine, where the rest of an `echo hi` takes 3-7 ms.

So a server (`keep_ready`) starts the NEXT call's first process ahead of time: a `/bin/sh`
that makes the same joins as `cgroups` (failing closed the same way), then blocks reading one
line from its stdin. The call writes its shell line (`cd`, then `exec env -i` with the call's
exact environment and argv) into a sealed memfd (`sealed`) and hands over only that file's
path; the shell sources it with stdin moved to /dev/null, so the program starts as a plain
spawn would: same pid, session, groups, limits, environment, working directory and closed
stdin. The grace period was paid while nothing waited for it.

Only a spawn whose limits match the helper's groups takes it; one that the line could not
carry exactly (a relative program, which Popen would look up itself, a NUL byte) spawns as
usual. An idle helper belongs to no call: it carries no marker, is registered as a Popen
leader (so no call's stray sweep takes it), dies with capy's cgroups at exit, and reads
end-of-file and exits if capy is killed outright.

Where calls are isolated (`isolation`), the helper has also entered the call's own PID and
mount namespaces and dropped its privileges: it is PID 1 there, and runs the call's program as
its child. No call's code can name it (nor capy, nor another call) at all. Its temp folders
are its call's own (`private`), with an empty `capy-call` folder: the line writes the call's
script there with the shell's builtin printf before it runs the program, so the script is
never anywhere another call could reach. The working and home folders it binds in (where
they lie under a temp folder) are part of its key; a call with a compile step or a file to
bind in spawns as usual.

No other process can put a line into a helper through a descriptor, root included. Any
process of the same user may open `/proc/<pid>/fd/N` of another's files: through a pipe on its
stdin, code in one call (or in ANOTHER capy server of the same user) could slip a line into an
idle helper that the next call took, and so run in that call's groups and environment. So the
helper's stdin is one end of a socketpair, which no process can open through /proc (ENXIO)
nor connect to (it is bound to no address); the other end lives only in capy, close-on-exec.
It carries one newline, the signal to go. The command sits in a memfd the helper opened (as
fd 4, by capy's /proc path, before entering any namespace) while it was still empty: capy
writes the call's line there and seals it before the signal, and reads it back once sealed,
so nothing can have changed it. Without isolation what is left is ptrace (or pidfd_getfd)
over the helper, which is the same right as ptrace over the server itself.

Bytes written into an idle helper's output pipes (also openable through /proc) would come back
as the next call's output: a helper whose pipes hold anything when a call takes it is ended.
A process that opened them and writes only after the handover is any process of the user
writing into a running call's pipes, which capy cannot refuse (a pipe opened by path is a
pipe; a socket instead would break programs that open /dev/stdout).

Where calls are not isolated, helpers are started only while no call is between its spawn and
its cleanup (the first call to begin takes the idle one, or ends it if it cannot use it), so no
code of this server's calls is alive to open an idle helper's pipes or its group's limit files:
that costs only overlapping calls their pre-joined start. Where they are isolated, no call can
name the helper at all (its own /proc lists only its own processes) nor see any cgroup (an
empty tree is mounted over them), so as many as the pack's `isolation.ready_spawners` are
kept ready, and the next one starts as soon as a call has taken one (or started without one),
while that call runs: calls made back to back, as an agent makes them, then find one ready
(a join's grace period is longer than a short call and its round trip, hence more than
one). A call that begins while a helper for its limits is still starting waits for that one
rather than pay a second start (the same grace period, from the beginning) beside it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import select
import shlex
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass

from capy.executor import cgroups, private, processes, sealed
from capy.executor.isolation import QUIET_CHILD
from capy.executor.isolation import Plan as IsolationPlan
from capy.executor.isolation import moved as folders_moved
from capy.executor.janitor import run_later
from capy.rules.views.executor import Isolation

# Waits for the signal on the socket on stdin, then sources the call's sealed line (fd 4); the
# line moves stdin to /dev/null and closes fd 4 first. End-of-file (capy ended the helper, or
# died) runs nothing.
_RUN_LINE = "IFS= read -r go && . /dev/fd/4; exit 126"
_WAIT_LINE = 'exec 4<"$1" || exit 125; shift; ' + cgroups.JOIN_LOOP + "shift; " + _RUN_LINE
_IDLE_CWD = "/"
_HOLD_TRIES = 200  # milliseconds for a new helper to enter its namespaces
_MAX_LINE_FILE = 1 << 20  # a larger script spawns as usual (its folder bound in)


@dataclass(frozen=True)
class Key:
    """What a helper was made for: a call takes it only if the call would be made alike."""

    max_tasks: int
    max_memory: int | None
    offline: bool
    isolation: Isolation
    # How it is isolated: a helper's mounts are fixed at its start, so one made before capy's
    # folders moved (another key or data folder) hides the old ones and must not be taken.
    plan: IsolationPlan | None
    # Folders of the machine under the call's own temp folders that it binds in at its start
    # (the working and home folders, see `private`): a call needing others spawns as usual.
    binds: tuple[private.Bind, ...] = ()


@dataclass
class _Helper:
    proc: subprocess.Popen[bytes]
    group: cgroups.CallGroup
    key: Key
    channel: socket.socket  # capy's end of the helper's stdin
    line: int  # the blank memfd the helper holds as fd 4
    isolated: bool  # PID 1 of its own namespaces: runs the program as its child
    # The helper's mount namespace, held open by capy: the kernel then tears it down (its
    # mounts, an RCU wait) when capy lets go after the call, not while the call ends.
    namespace: int | None = None


_lock = threading.Condition()
_ready: list[_Helper] = []  # idle helpers, oldest first; all for one key
_calls = 0  # calls between their spawn and their cleanup: while any runs, no helper is idle
_enabled = False
_starting: list[Key] = []  # the key of each helper being started
# Helpers start on worker threads kept for the process: starting a thread per helper cost the
# call that asked for it ~2 ms on a loaded machine. As many workers as helpers may be wanted
# at once, so their cgroup joins share one grace period instead of queueing.
_starters = None  # a ThreadPoolExecutor, made at the first start
_started: set = set()  # the futures of helpers being started
_MAX_STARTS = 8  # the schema's ceiling of `ready_spawners`
# How long a call waits for a helper that is starting for its limits; one that takes longer
# is stuck (a start takes tens of milliseconds), and the call spawns as usual.
_WAIT_SECONDS = 1.0
_env_binary: str | None = None
_handed: dict[int, _Helper] = {}  # a taken helper's pid -> it, until its call ends


def keep_ready() -> None:
    """From now on keep one pre-joined spawner ready, from the end of the first call on (the
    cgroups are found at that call, so a process that never runs one pays nothing)."""
    global _enabled
    with _lock:
        if not _enabled:
            _enabled = True
            atexit.register(stop)


def enabled() -> bool:
    return _enabled


def stop() -> None:
    """No more helpers; the idle ones are ended and reaped, and so is each one being started."""
    global _enabled
    with _lock:
        _enabled = False
        idle = _take_ready()
        starting = list(_started)
        _lock.notify_all()
    for helper in idle:
        _discard(helper)
    if starting:
        from concurrent.futures import wait

        wait(starting)  # each ends the helper it was starting: helpers are off


def settle(timeout: float = 10.0) -> None:
    """Wait until no helper is starting (the ready ones are then all there is)."""
    with _lock:
        _lock.wait_for(lambda: not _starting, timeout)


def claim(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    key: Key,
    files: tuple[tuple[str, bytes], ...] | None = (),
) -> tuple[subprocess.Popen[bytes], cgroups.CallGroup] | None:
    """A call begins (it must `release()` at its cleanup, or if it fails to start): the ready
    helper running `argv` in `env` and `cwd`, with its groups, after writing `files` (path,
    content) into its own call folder where it is isolated; None when there is none for these
    limits, or the call cannot be handed over exactly (then spawn as usual, and the idle helper
    is ended: it must not wait within reach of this call's code). `files` None: the isolated
    call needs more of the machine than a helper's namespace holds (see `private`)."""
    global _calls
    with _lock:
        _calls += 1
        if files is None and _isolated(key):
            return None  # the ready helpers stay ready: no call can reach them
        if not _ready and key in _starting and _isolated(key):  # see the module docstring
            _lock.wait_for(lambda: _ready or key not in _starting, _WAIT_SECONDS)
        helper = _ready.pop(0) if _ready and _ready[0].key == key else None
        others = _take_ready() if helper is None else []
    for other in others:
        _discard(other)  # made for other limits: it must not wait within reach of this call
    if helper is None:
        return None
    line = _line(argv, env, cwd, isolated=helper.isolated, files=files or ())
    usable = helper.key == key and helper.proc.poll() is None and not _output_waiting(helper)
    if line is None or not usable or not sealed.fill(helper.line, line):
        _discard(helper)  # not usable here, tampered with, or it could not join its groups
        return None
    try:
        helper.channel.sendall(b"\n")
    except OSError:
        _discard(helper)
        return None
    helper.channel.close()
    with _lock:
        _handed[helper.proc.pid] = helper
    return helper.proc, helper.group


def release(pid: int | None = None) -> bool:
    """A call's cleanup is done (`pid`: its first process): whether no call runs now (the time
    to start a helper)."""
    global _calls
    with _lock:
        _calls = max(0, _calls - 1)
        helper = _handed.pop(pid, None) if pid is not None else None
        idle = _calls == 0
    if helper is not None:
        _close(helper.line)
        if helper.namespace is not None:
            run_later(functools.partial(_close, helper.namespace))
    return idle


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _hold_namespace(pid: int) -> int | None:
    """A descriptor of `pid`'s mount namespace once it has left capy's (None if it does not
    in time, or cannot be opened)."""
    try:
        own = os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return None
    for _ in range(_HOLD_TRIES):
        try:
            fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        if os.fstat(fd).st_ino != own:
            return fd
        os.close(fd)
        time.sleep(0.001)
    return None


def _output_waiting(helper: _Helper) -> bool:
    """Whether anything was written into the idle helper's output pipes (it writes nothing)."""
    streams = [stream for stream in (helper.proc.stdout, helper.proc.stderr) if stream]
    try:
        return bool(select.select(streams, [], [], 0)[0])
    except (OSError, ValueError):
        return True


def refill(key: Key) -> None:
    """Start helpers for these limits on the spawner workers, until as many are ready or
    starting as the pack keeps (one where calls are not isolated); none while helpers are off,
    or while a call runs where calls are not isolated (checked again once a helper started: a
    call may have begun meanwhile)."""
    isolated = _isolated(key)
    wanted = key.isolation.ready_spawners if isolated else 1
    with _lock:
        if not _enabled or (_calls and not isolated):
            return
        have = sum(helper.key == key for helper in _ready) + _starting.count(key)
        for _ in range(wanted - have):
            _starting.append(key)
            started = _workers().submit(_fill, key, isolated, wanted)
            _started.add(started)
            started.add_done_callback(_started.discard)


def _workers():
    global _starters
    if _starters is None:
        from concurrent.futures import ThreadPoolExecutor

        _starters = ThreadPoolExecutor(_MAX_STARTS, thread_name_prefix="capy-spawner")
    return _starters


def _isolated(key: Key) -> bool:
    return key.plan is not None


def _take_ready() -> list[_Helper]:
    """Every idle helper, out of the list (the caller holds the lock)."""
    taken = list(_ready)
    _ready.clear()
    return taken


def _fill(key: Key, isolated: bool, wanted: int) -> None:
    helper: _Helper | None = None
    try:
        with _lock:
            stale = [idle for idle in _ready if idle.key != key]
            _ready[:] = [idle for idle in _ready if idle.key == key]
        for idle in stale:
            _discard(idle)
        helper = _start(key)
    finally:
        with _lock:
            keep = _enabled and (isolated or not _calls) and len(_ready) < wanted
            if helper is not None and keep:
                _ready.append(helper)
                helper = None
            _starting.remove(key)
            _lock.notify_all()
        if helper is not None:
            _discard(helper)


def _start(key: Key) -> _Helper | None:
    global _env_binary
    _env_binary = _env_binary or shutil.which("env", path=os.defpath)
    if _env_binary is None or not sealed.available():
        return None
    ns = key.plan
    if ns is not None and folders_moved(key.isolation):
        return None  # it would hide the decoy at the old path (see `hidden`)
    if ns is None and key.offline:
        return None  # the network prefix goes inside the joins: such calls spawn as usual
    line = sealed.blank("capy-call")
    if line is None:
        return None
    group = cgroups.call_group(
        f"ready-{os.urandom(8).hex()}", max_tasks=key.max_tasks, max_memory_bytes=key.max_memory
    )
    if group is None:
        os.close(line)
        return None
    line_path = f"/proc/{os.getpid()}/fd/{line}"
    waiting = [cgroups.SHELL, "-c", _RUN_LINE]
    table = None
    ours, theirs = socket.socketpair()  # both close-on-exec; Popen dups theirs onto stdin
    try:
        if ns is not None:
            argv, table = ns.helper(line_path, group.join_files, waiting, key.binds)
        else:
            argv = [cgroups.SHELL, "-c", _WAIT_LINE, "capy-ready", line_path, *group.join_files]
            argv.append("--")
        with theirs:
            proc = processes.start_leader(
                argv,
                stdin=theirs.fileno(),
                env={},
                cwd=_IDLE_CWD,
                max_tasks=key.max_tasks,
                pass_fds=() if table is None else (table,),
            )
    except OSError:
        ours.close()
        os.close(line)
        group.remove()
        return None
    finally:
        if table is not None:
            os.close(table)
    ours.shutdown(socket.SHUT_RD)  # capy only ever writes to it
    held = _hold_namespace(proc.pid) if ns is not None else None
    return _Helper(proc, group, key, ours, line, ns is not None, held)


def _discard(helper: _Helper) -> None:
    # An isolated helper's PID 1 is the child of `unshare`; killed together (or forked just
    # as `unshare` died), it is left to capy, the subreaper, to reap: it is found by its
    # session, which is the helper's.
    with contextlib.suppress(OSError):
        helper.proc.kill()
    helper.group.kill()
    helper.proc.wait()
    processes.reap_session_orphans(helper.proc.pid)
    helper.channel.close()
    _close(helper.line)
    if helper.namespace is not None:
        _close(helper.namespace)
    for stream in (helper.proc.stdin, helper.proc.stdout, helper.proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    with processes.spawn_lock:
        processes.forget_leader(helper.proc.pid)
    helper.group.remove()


def _line(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    *,
    isolated: bool,
    files: tuple[tuple[str, bytes], ...] = (),
) -> bytes | None:
    """`cd` and `env -i NAME=VALUE... PROGRAM ARGS...`, quoted for the shell (exec'd, or run
    as the child of an isolated helper, which is PID 1, after it wrote `files` with its
    builtin printf); None when `env` would read an argument otherwise than `Popen` would pass
    it, or a file cannot be carried in the line."""
    if _env_binary is None or not argv or "=" in argv[0] or argv[0].startswith("-"):
        return None
    if any("=" in name or name.startswith("-") or not name for name in env):
        return None
    if not os.path.isabs(argv[0]) or not (isolated or os.path.isdir(cwd)):
        return None  # Popen would search PATH or fail with OSError: let it
    words = [_env_binary, "-i", *(f"{name}={value}" for name, value in env.items()), *argv]
    if any("\0" in word for word in (*words, cwd)):
        return None  # Popen refuses these with ValueError: let it
    command = " ".join(shlex.quote(word) for word in words)
    if isolated:  # PID 1 runs it as its child, quietly (see `isolation`)
        writes = _writes(files)
        if writes is None:
            return None
        text = (
            f"exec </dev/null 4<&-; {QUIET_CHILD}({writes}cd -P -- {shlex.quote(cwd)} 2>&9 && "
            f"exec {command} 2>&9 9>&-); exit $?\n"
        )
    else:
        text = f"exec </dev/null 4<&-; cd -P -- {shlex.quote(cwd)} && exec {command}\n"
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return None


def _writes(files: tuple[tuple[str, bytes], ...]) -> str | None:
    """Shell writing each file with the builtin printf (no program started); None for content
    a shell word cannot hold (a NUL byte) or that is too long to carry in a line."""
    words = []
    for path, content in files:
        if b"\0" in content or len(content) > _MAX_LINE_FILE:
            return None
        text = shlex.quote(content.decode("utf-8", "surrogateescape"))
        words.append(f"printf %s {text} > {shlex.quote(path)} 2>&9 && ")
    return "".join(words)
