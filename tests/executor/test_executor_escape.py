"""Escapes: children that leave the session, re-parent, and wipe or forge the call's marker.

Each escapee runs `sleep` with an argument unique to the test, so a survivor is found by its
command line (the marker, the thing it forged, cannot be used for that). Every attempt runs
twice: with the call's cgroup where the machine has one, and with the subreaper and the tree
scan alone (the containment a machine without usable cgroups gets).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_helpers import processes_running, unique_sleep

from capy.executor import cgroups, execute, phase, processes, sandbox

# {tag} is replaced by a sleep length unique to the test: the escapee's fingerprint.
ESCAPES = {
    "shell-forged-marker": (
        "shell",
        "(CAPY_SANDBOX_ID=forged setsid sleep {tag} >/dev/null 2>&1 &) ; echo spawned",
    ),
    "shell-marker-unset": (
        "shell",
        "(unset CAPY_SANDBOX_ID; setsid sleep {tag} >/dev/null 2>&1 &) ; echo spawned",
    ),
    "shell-env-i-late": (
        # Leaves after a delay, so it is still in the tree when the leader exits.
        "shell",
        "(setsid sh -c 'sleep 0.3; exec env -i CAPY_SANDBOX_ID=x sleep {tag}' "
        ">/dev/null 2>&1 &) ; echo spawned",
    ),
    "python-double-fork-forged": (
        "python",
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.execve('/bin/sleep', ['sleep', '{tag}'], {'CAPY_SANDBOX_ID': 'forged'})\n"
        "    os._exit(0)\n"
        "print('spawned')\n",
    ),
    "perl-setsid-forged": (
        "perl",
        "use POSIX; if (fork() == 0) { POSIX::setsid(); if (fork() == 0) { "
        "$ENV{CAPY_SANDBOX_ID} = 'forged'; close STDOUT; close STDERR; exec('sleep', '{tag}'); } "
        'exit 0; } print "spawned\\n";',
    ),
}


def _with_sleep_tag(code: str, tag: str) -> str:
    return code.replace("{tag}", tag)


@pytest.fixture
def sleep_tag() -> Iterator[str]:
    with unique_sleep() as tag:
        yield tag


@pytest.fixture(params=["cgroup", "scan"])
def containment(request, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "cgroup":
        if not cgroups.hierarchies():
            pytest.skip("no usable cgroup hierarchy on this machine")
    else:
        monkeypatch.setattr(phase.cgroups, "call_group", lambda *args, **kwargs: None)
    return request.param


def _require(language: str) -> None:
    command = {"perl": "perl", "shell": "bash", "python": "python3"}[language]
    if shutil.which(command) is None:
        pytest.skip(f"{command} is not installed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
@pytest.mark.parametrize("attempt", sorted(ESCAPES))
def test_an_escaping_child_does_not_outlive_the_call(
    attempt: str, containment: str, sleep_tag: str, view, nothing_leaks
) -> None:
    _escape_is_contained(attempt, containment, sleep_tag, view)


def _escape_is_contained(attempt: str, containment: str, sleep_tag: str, view) -> None:
    language, code = ESCAPES[attempt]
    _require(language)
    result = execute(language, _with_sleep_tag(code, sleep_tag), rules=view, timeout=20)
    assert result.output.strip() == "spawned", result
    time.sleep(0.5)  # a late leaver has left by now, if it was not killed
    assert processes_running(sleep_tag) == [], f"{attempt} survived the call ({containment})"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_a_parent_that_exits_during_the_scan_does_not_hide_its_child(
    sleep_tag: str, view, monkeypatch: pytest.MonkeyPatch, nothing_leaks
) -> None:
    """The scan reads capy's children, then each one's state and children: not one atomic
    read. An escapee's parent that exits in between hands its child to capy after capy's list
    was read, and itself reads as a zombie with no children. On a loaded machine that window
    is hit now and then (the perl escape survived about one run in 12); here the scan is held
    in it every time: after reading capy's children it waits until they have exited."""
    monkeypatch.setattr(phase.cgroups, "call_group", lambda *args, **kwargs: None)
    # In its own PID namespace an escapee re-parents to the call's PID 1, never to capy: this
    # is the subreaper's path, where the kernel gives no namespaces.
    monkeypatch.setattr(phase, "isolation_plan", lambda *args, **kwargs: None)
    monkeypatch.setattr(sandbox, "isolation_plan", lambda *args, **kwargs: None)
    read_children = processes.children_of
    held: list[int] = []

    def children_read_before_they_exit(pid: int) -> list[int]:
        children = read_children(pid)
        strays = [child for child in children if child not in processes._live_leaders]
        if pid == os.getpid() and strays and not held:
            held.extend(strays)  # the first scan that finds the escapee's parent, only
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline and any(_running(child) for child in strays):
                time.sleep(0.005)
        return children

    monkeypatch.setattr(processes, "children_of", children_read_before_they_exit)
    _require("perl")
    # The parent lingers a moment, so that it is surely alive when the first scan lists it.
    code = ESCAPES["perl-setsid-forged"][1].replace(
        "POSIX::setsid(); ", "POSIX::setsid(); select(undef, undef, undef, 0.3); "
    )
    result = execute("perl", _with_sleep_tag(code, sleep_tag), rules=view, timeout=20)
    assert result.output.strip() == "spawned", result
    assert held, "the scan never listed the escapee's parent"
    time.sleep(0.3)
    assert processes_running(sleep_tag) == [], "the child of a parent that exited mid-scan survived"


def _running(pid: int) -> bool:
    info = processes.proc_info(pid)
    return info is not None and info.state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_an_escaping_child_does_not_outlive_a_timed_out_call(
    containment: str, sleep_tag: str, view
) -> None:
    code = f"(CAPY_SANDBOX_ID=forged setsid sleep {sleep_tag} >/dev/null 2>&1 &) ; sleep 100"
    result = execute("shell", code, rules=view, timeout=0.5)
    assert result.killed_reason == "timeout"
    assert processes_running(sleep_tag) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_an_escaping_child_does_not_outlive_the_cli(sleep_tag: str, tmp_path: Path) -> None:
    """`capy execute` exits right after the call: nothing it ran may be re-parented to init."""
    code = _with_sleep_tag(ESCAPES["python-double-fork-forged"][1], sleep_tag)
    done = subprocess.run(
        [sys.executable, "-m", "capy", "execute", "python", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert "spawned" in done.stdout, done.stderr
    time.sleep(0.3)
    assert processes_running(sleep_tag) == []


# A steady stream of escapes: whenever the call is ended, one escapee's parent is likely
# half-way through its fork or its exit, the moments a scan can miss.
_ESCAPE_STREAM = (
    "while :; do (CAPY_SANDBOX_ID=forged setsid sleep {tag} >/dev/null 2>&1 &); sleep 0.02; done"
)


def _run_in_thread(call) -> tuple[threading.Thread, list]:
    results: list = []
    worker = threading.Thread(target=lambda: results.append(call()), daemon=True)
    worker.start()
    return worker, results


def _wait_for_escapees(tag: str, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(processes_running(tag)) < count:
        assert time.monotonic() < deadline, "the escapes never started"
        time.sleep(0.02)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_escapees_do_not_outlive_a_cancelled_call(
    containment: str, sleep_tag: str, view, nothing_leaks
) -> None:
    cancel = threading.Event()
    code = _with_sleep_tag(_ESCAPE_STREAM, sleep_tag)
    worker, results = _run_in_thread(
        lambda: execute("shell", code, rules=view, timeout=60, cancel=cancel)
    )
    _wait_for_escapees(sleep_tag, 3)
    cancel.set()
    worker.join(30)
    assert results and results[0].killed_reason == "cancelled"
    assert processes_running(sleep_tag) == [], f"an escapee outlived the cancel ({containment})"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
def test_escapees_do_not_outlive_the_server_exit(
    containment: str, sleep_tag: str, view, nothing_leaks
) -> None:
    """What the MCP server runs as it exits (`terminate_all`), while a call still runs."""
    code = _with_sleep_tag(_ESCAPE_STREAM, sleep_tag)
    worker, _ = _run_in_thread(lambda: execute("shell", code, rules=view, timeout=60))
    _wait_for_escapees(sleep_tag, 3)
    assert processes.terminate_all() >= 1
    assert processes_running(sleep_tag) == [], f"an escapee outlived the exit ({containment})"
    worker.join(30)
    assert processes_running(sleep_tag) == []
