"""The ready spawner a server keeps: a call that takes it runs exactly as a plain spawn would.

Same environment, working directory, closed stdin, cgroups and caps; the idle spawner is no
call's process and is gone once helpers stop. Each test compares a call made through the ready
spawner with the same call made the ordinary way. Nothing but capy gets a line or output into
an idle spawner: not code in a call, not another process of the same user (root included).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from capy.executor import cgroups, execute, janitor, prejoin, processes
from tests.executor.conftest import tuned
from tests.executor.test_executor_cgroup_limits import FORK_COUNTER

PROBE = (
    'env | LC_ALL=C sort; echo "cwd=$(pwd -P)"; '
    'if read -r line; then echo "stdin=$line"; else echo stdin=closed; fi; '
    'grep -c "capy-" /proc/self/cgroup'
)


@pytest.fixture
def ready() -> Iterator[None]:
    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine, so nothing to join ahead")
    prejoin.keep_ready()
    yield
    prejoin.stop()


def _took_the_ready_spawner(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    taken: list[bool] = []
    original = prejoin.claim

    def recording(*args, **kwargs):
        found = original(*args, **kwargs)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(prejoin, "claim", recording)
    return taken


def _warm_up(view) -> None:
    """One call, then its cleanup: that is when the next call's spawner starts."""
    assert execute("shell", "true", rules=view).ok
    janitor.wait_for_cleanup()
    prejoin.settle()


def test_a_call_through_the_ready_spawner_runs_as_a_plain_spawn(ready, view, monkeypatch) -> None:
    """In the working folder of the call that started the spawner: one that lies under the
    temp folder is bound into the spawner at its start (see `private`)."""
    tmp_path = Path.cwd()
    _warm_up(view)
    taken = _took_the_ready_spawner(monkeypatch)
    through_ready = execute("shell", PROBE, rules=view, cwd=tmp_path)
    prejoin.stop()
    plain = execute("shell", PROBE, rules=view, cwd=tmp_path)
    assert taken == [True, False]
    assert through_ready.ok and plain.ok
    expected = plain.output.replace(plain.sandbox_id, through_ready.sandbox_id)
    assert through_ready.output == expected
    assert f"cwd={tmp_path.resolve()}" in through_ready.output
    assert "stdin=closed" in through_ready.output
    assert through_ready.output.rstrip().endswith(str(len(cgroups.hierarchies())))


def test_the_process_cap_holds_through_the_ready_spawner(ready, view, monkeypatch) -> None:
    if not any("pids" in hierarchy.controllers() for hierarchy in cgroups.hierarchies()):
        pytest.skip("no usable pids cgroup controller on this machine")
    small = tuned(view, max_processes=40, timeout=15, grace=0.2)
    _warm_up(small)
    taken = _took_the_ready_spawner(monkeypatch)
    result = execute("python", FORK_COUNTER, rules=small)
    assert taken == [True]
    assert result.killed_reason == "process-limit", result
    assert 30 <= int(result.output.split()[1]) <= 39, result.output


def test_a_spawner_made_for_other_limits_is_not_taken(ready, view, monkeypatch) -> None:
    _warm_up(view)
    taken = _took_the_ready_spawner(monkeypatch)
    other = tuned(view, max_processes=77)
    assert execute("shell", "echo hi", rules=other).output == "hi\n"
    assert taken == [False]


def test_the_idle_spawner_is_no_call_and_ends_with_the_helpers(ready, view) -> None:
    _warm_up(view)
    assert prejoin._ready
    idle = prejoin._ready[0]
    assert idle.proc.pid in processes._live_leaders  # no call's stray sweep takes it
    assert processes.marker_of(idle.proc.pid) is None
    assert idle.proc.poll() is None
    prejoin.stop()
    assert idle.proc.returncode is not None
    assert idle.proc.pid not in processes._live_leaders
    for group in idle.group.groups.values():
        assert not group.exists()


def test_no_spawner_waits_idle_while_a_call_runs(ready, view, tmp_path) -> None:
    """Code in a call hunts this capy's waiting spawners (any child whose stdin is a pipe or a
    socket) for 3 s while another call ends, which is when a spawner used to start: none is
    found, so there is nothing to write a line into (where calls are isolated spawners do wait
    while calls run, out of any call's sight). (Other test workers' spawners are another
    process's: left alone.)"""
    import os
    import threading

    from capy.bench import hostile_spawner

    _warm_up(view)
    slow = tuned(view, timeout=20, grace=0.2)
    code = hostile_spawner.attacker_code(tmp_path, 3.0, parents=(os.getpid(),))
    found: list = []
    injector = threading.Thread(target=lambda: found.append(execute("python", code, rules=slow)))
    injector.start()
    # Another call ends while the injector runs: its cleanup is when a spawner used to start.
    assert execute("shell", "true", rules=view).ok
    janitor.wait_for_cleanup()
    prejoin.settle()
    injector.join()
    janitor.wait_for_cleanup()
    assert found and found[0].ok, found
    report = json.loads(found[0].output.strip().splitlines()[-1])
    assert report["tried"].get("command-given", 0) == 0, report  # no spawner waited
    assert report["opened"] == {}, report
    assert execute("shell", "echo next", rules=view).output == "next\n"
    assert not (tmp_path / "command-given").exists()


def test_another_process_cannot_get_a_line_or_output_into_the_idle_spawner(
    ready, view, tmp_path
) -> None:
    """Not a call of this capy: a separate process of the same user (root, where the tests run
    as root), as another capy server's code would be, hunts this process's idle spawner."""
    import os
    import subprocess

    from capy.bench import hostile_spawner

    _warm_up(view)
    assert prejoin._ready
    argv = hostile_spawner.attacker_argv(tmp_path, 1.0, parents=(os.getpid(),))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout)
    assert report["tried"].get("command-given", 0) > 0, report  # it found the spawner
    assert report["opened"].get("command-given", 0) == 0, report
    result = execute("shell", "echo next", rules=view)
    assert result.output == "next\n", result.output
    assert not (tmp_path / "command-given").exists()


def _hold_then_open(stdin_kind: str, uid: int | None) -> str:
    """A process of `uid` waits on a pipe or a socket; another of `uid` opens its stdin through
    /proc for writing. What the opener said: "opened", or the shell's error."""
    import os
    import socket
    import subprocess
    import time

    def become() -> None:
        if uid is not None:
            os.setgid(uid)
            os.setuid(uid)

    ends: list[int] = []
    if stdin_kind == "pipe":  # made by that user (a pipe's inode belongs to who made it)
        holder = subprocess.Popen(
            ["/bin/sh", "-c", "sleep 30 | sleep 30"],
            stdin=subprocess.DEVNULL,
            preexec_fn=become,
            start_new_session=True,
        )
    else:  # a socket's inode is open to all: what refuses the open is its kind
        ends = [sock.detach() for sock in socket.socketpair()]
        holder = subprocess.Popen(
            ["sleep", "30"], stdin=ends[0], preexec_fn=become, start_new_session=True
        )
    try:
        target = holder.pid
        deadline = time.monotonic() + 10
        while stdin_kind == "pipe" and time.monotonic() < deadline:
            readers = [
                pid
                for pid in processes.children_of(holder.pid)
                if os.readlink(f"/proc/{pid}/fd/0").startswith("pipe:")
            ]
            if readers:
                target = readers[0]
                break
            time.sleep(0.01)
        opener = subprocess.run(
            ["/bin/sh", "-c", OPENER, "opener", f"/proc/{target}/fd/0"],
            capture_output=True,
            text=True,
            timeout=30,
            preexec_fn=become,
        )
        return opener.stdout.strip()
    finally:
        sleepers = processes.children_of(holder.pid)
        os.killpg(holder.pid, 9)
        holder.wait()
        for pid in sleepers:  # orphans come to this process (a subreaper): reap them
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        for end in ends:
            os.close(end)


# (A shell, not Python: the user the test switches to may not be allowed to run this venv.)
OPENER = 'exec 2>&1; : > "$1" && echo opened'


@pytest.mark.parametrize(
    ("stdin_kind", "expected"), [("pipe", "opened"), ("socket", "No such device or address")]
)
def test_a_socket_stdin_cannot_be_opened_by_the_same_user(stdin_kind, expected) -> None:
    """The spawner's channel, for a user other than root: a pipe is open to every process of
    the same user, a socket to none (as root, the test above runs against the real spawner)."""
    import os

    uid = 65534 if os.geteuid() == 0 else None  # as root, both processes run as nobody
    assert expected in _hold_then_open(stdin_kind, uid)


def _isolated_or_skip(view) -> None:
    from capy.executor import isolation

    if isolation.plan(view.isolation) is None:
        pytest.skip(f"calls are not isolated here: {isolation.unavailable_reason(view.isolation)}")


def test_calls_made_back_to_back_each_take_a_ready_spawner(ready, view, monkeypatch) -> None:
    """Where calls are isolated the next spawners start while a call runs, and a call that
    comes while one is still starting waits for it instead of spawning cold beside it."""
    _isolated_or_skip(view)
    _warm_up(view)
    taken = _took_the_ready_spawner(monkeypatch)
    for number in range(6):
        assert execute("shell", f"echo {number}", rules=view).output == f"{number}\n"
    assert taken == [True] * 6


def test_spawners_are_ready_while_an_isolated_call_runs(ready, view) -> None:
    """As many as the pack keeps, for the next calls, out of the running call's sight."""
    import threading
    import time

    _isolated_or_skip(view)
    _warm_up(view)
    stop = threading.Event()
    results: list = []
    running = threading.Thread(
        target=lambda: results.append(execute("shell", "sleep 60", rules=view, cancel=stop))
    )
    running.start()

    def calls_now() -> int:
        with processes.spawn_lock:
            return len(processes._live_calls)

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not calls_now():
        time.sleep(0.02)
    prejoin.settle()
    calls = calls_now()
    ready_now = len(prejoin._ready)
    stop.set()
    running.join()
    assert calls == 1
    assert ready_now == view.isolation.ready_spawners
    assert results[0].killed_reason == "cancelled"
    janitor.wait_for_cleanup()
