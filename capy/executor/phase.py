"""One subprocess of a call (a compile step or the run): spawn, pump, stop, clean up."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from capy.executor import cgroups, network, prejoin, private, processes
from capy.executor.isolation import plan as isolation_plan
from capy.executor.pump import Pump, Stop
from capy.rules.views.executor import Isolation, Limits, NetworkMode

_KILLED_REASON = {
    Stop.DEADLINE: "timeout",
    Stop.OUTPUT_CAP: "output-cap",
    Stop.PROCESS_LIMIT: "process-limit",
    Stop.CANCELLED: "cancelled",
}


@dataclass
class Phase:
    """A running subprocess with its output pump and the means to find all it started."""

    proc: subprocess.Popen[bytes]
    pump: Pump
    procs: processes.CallProcesses
    limits: Limits
    key: prejoin.Key  # how it was spawned: the next call's spawner is made alike

    @property
    def pid(self) -> int:
        return self.proc.pid


@dataclass(frozen=True)
class PhaseOutcome:
    exit_code: int | None
    stop: Stop
    killed_reason: str | None


def spawn(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    marker: str,
    limits: Limits,
    isolation: Isolation,
    offline: bool = False,
    cancel: threading.Event | None = None,
    binds: tuple[private.Bind, ...] = (),
    files: tuple[tuple[str, bytes], ...] | None = None,
) -> Phase:
    """Start `argv` in its own session, cgroup and namespaces (see `isolation`), stdin closed,
    both output pipes captured; `offline`: with no network (see `network`). `cwd` and the
    paths in `argv` are as the call sees them; `binds` bring capy's folder for the call (and
    what else it needs, see `private`) into an isolated call; `files` (path, content) are
    what a ready spawner writes into its own call folder instead (None: the call needs
    more than that, so it never takes one). The first bind is the call's folder, which a
    spawner replaces by its own; the others it makes at its start (they are in its key)."""
    processes.enable_subreaper()
    processes.terminate_all_at_exit()
    started = processes.boot_ticks_now()
    max_processes = limits.processes.max_new_processes
    key = spawn_key(limits, isolation, offline, binds[1:] if files is not None else ())
    ready = prejoin.claim(argv, env, cwd, key, files)
    if prejoin.enabled():
        _refill(key)  # the next call's, now where calls are isolated (see `prejoin`)
    if ready is not None:
        proc, group = ready
    else:
        try:
            proc, group = _spawn_joining(argv, env, cwd, marker, key, binds)
        except BaseException:
            prejoin.release()
            raise
    call = processes.CallProcesses(proc.pid, marker, started, group)
    pump = Pump(
        proc,
        cap_bytes=limits.output.hard_cap_bytes,
        over_process_limit=lambda: call.over_limit(max_processes),
        cancel=cancel,
    )
    return Phase(proc, pump, call, limits, key)


def _refill(key: prejoin.Key) -> None:
    """Start the next calls' spawners; a failure leaves only fewer of them ready. It must not
    escape: a helper may already run this call, which then needs its Phase and its cleanup."""
    with contextlib.suppress(Exception):
        prejoin.refill(key)


def spawn_key(
    limits: Limits, isolation: Isolation, offline: bool, binds: tuple[private.Bind, ...] = ()
) -> prejoin.Key:
    """What a call is made with (`binds`: the folders of the machine a ready spawner would
    bind in, see `private`); ExecutorError where the pack refuses every call here."""
    ns = isolation_plan(isolation, offline=offline)
    return prejoin.Key(
        limits.processes.max_new_processes,
        limits.memory.max_bytes,
        offline,
        isolation,
        ns,
        binds if ns is not None else (),
    )


def _spawn_joining(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    marker: str,
    key: prejoin.Key,
    binds: tuple[private.Bind, ...],
) -> tuple[subprocess.Popen[bytes], cgroups.CallGroup | None]:
    """Start `argv` through a shell that first moves itself into the call's new groups, then
    into the call's own namespaces where this machine allows them."""
    ns = key.plan
    group = cgroups.call_group(marker, max_tasks=key.max_tasks, max_memory_bytes=key.max_memory)
    joins = group.join_files if group is not None else []
    table = None
    try:
        if ns is not None:  # it enters `cwd` inside, once its folders are mounted
            argv, table = ns.command(argv, joins, cwd, binds, env)
            cwd = "/"
        elif binds:  # its paths name its own folders, which only isolation makes
            raise OSError("the call was prepared isolated, and isolation is gone")
        else:
            argv = network.isolate(argv, NetworkMode.OFF if key.offline else NetworkMode.ON)
            if group is not None:
                argv = group.wrap(argv)
        proc = processes.start_leader(
            argv,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            max_tasks=key.max_tasks,
            pass_fds=() if table is None else (table,),
        )
    except BaseException:
        if group is not None:
            group.remove()
        raise
    finally:
        if table is not None:
            os.close(table)  # the call's shell holds its own copy
    return proc, group


def finish(phase: Phase, deadline: float) -> PhaseOutcome:
    """Pump until the deadline; past it (or past a cap) stop the whole call's processes."""
    try:
        stop = phase.pump.run_until(deadline)
    except BaseException:  # Ctrl-C, a shutdown: the call's processes must not outlive it
        cleanup(phase)
        raise
    return stop_and_collect(phase, stop)


def stop_and_collect(phase: Phase, stop: Stop) -> PhaseOutcome:
    if stop is Stop.DEADLINE:
        # A polite SIGTERM first, so programs can flush and remove their own temp files.
        phase.procs.signal_group(signal.SIGTERM)
        # Whatever still runs after the grace is killed by the sweep in cleanup().
        phase.pump.run_until(time.monotonic() + phase.limits.timeout.kill_grace_seconds)
    out_of_memory = phase.procs.group is not None and phase.procs.group.out_of_memory()
    cleanup(phase)
    reason = "memory-limit" if out_of_memory else _KILLED_REASON.get(stop)
    return PhaseOutcome(exit_code(phase.proc.returncode), stop, reason)


def cleanup(phase: Phase) -> None:
    """Kill whatever of the call survives, reap the leader, then strays it left behind."""
    if phase.proc.poll() is None:
        phase.procs.sweep()
        phase.proc.wait()
    with processes.spawn_lock:
        processes.forget_leader(phase.pid)
    phase.procs.sweep()
    # Killed together with `unshare` (the leader, now reaped), an isolated call's PID 1 was
    # handed to capy before the leader's exit completed: collect it too.
    processes.reap_session_orphans(phase.pid)
    phase.procs.release()
    # The next call's spawner joins its groups while nothing waits, once no call runs (where
    # calls are isolated, the spawners started at this call's spawn already: see `prejoin`).
    if prejoin.release(phase.pid) and prejoin.enabled():
        _refill(phase.key)
    # Everything is dead now, so the pipes hold all that will ever come: keep it.
    phase.pump.drain()
    phase.pump.close()


def exit_code(returncode: int | None) -> int | None:
    """Shell convention: a process ended by signal N exits 128 + N."""
    if returncode is None:
        return None
    return 128 - returncode if returncode < 0 else returncode
