"""Hostile code: fork bombs, floods, sleepers, daemons. Each is contained and cleaned up.

Every hostile program here is bounded by itself as well (a fork bomb with a depth, a flood
the cap stops early), so a regression makes a test fail, never the machine suffer. The autouse
`nothing_leaks` fixture then checks /proc for any process carrying one of the test's markers.
"""

from __future__ import annotations

import os
import time

from capy.executor import execute
from capy.executor.processes import marked_processes, proc_info
from tests.executor.conftest import tuned

# A binary fork bomb bounded at depth 7: 2^8 - 1 shells, each also running a sleep.
BOUNDED_FORK_BOMB = """
bomb() { if [ "$1" -gt 0 ]; then bomb $(($1 - 1)) & bomb $(($1 - 1)) & fi; sleep 30; }
bomb 7
"""


def _alive(pid: int) -> bool:
    info = proc_info(pid)
    return info is not None and info.state != "Z"


def test_fork_bomb_hits_the_process_limit_and_is_swept(view) -> None:
    small = tuned(view, max_processes=40, timeout=10, grace=0.2)
    started = time.monotonic()
    result = execute("shell", BOUNDED_FORK_BOMB, rules=small)
    assert result.killed_reason == "process-limit", result
    assert time.monotonic() - started < 5
    assert marked_processes(result.sandbox_id) == []


def test_infinite_output_is_capped_and_killed(view) -> None:
    small = tuned(view, hard_cap=2_000_000, timeout=20)
    result = execute("python", "while True:\n    print('y' * 1000)", rules=small)
    assert result.killed_reason == "output-cap"
    assert 2_000_000 < len(result.stdout) < 2_000_000 + 200_000
    assert result.truncated_bytes > 0
    assert len(result.output) < view.limits.output.max_returned_bytes + 200


def test_infinite_output_on_both_streams_does_not_deadlock(view) -> None:
    small = tuned(view, hard_cap=1_000_000, timeout=20)
    code = (
        "import sys\nwhile True:\n"
        "    sys.stderr.write('e' * 70000)\n    sys.stdout.write('o' * 70000)\n"
    )
    result = execute("python", code, rules=small)
    assert result.killed_reason == "output-cap"
    assert result.stdout and result.stderr


def test_sleep_forever_is_killed_by_the_timeout(view) -> None:
    small = tuned(view, grace=0.3)
    started = time.monotonic()
    result = execute("shell", "echo before; sleep 1000", rules=small, timeout=0.5)
    assert result.timed_out and result.killed_reason == "timeout"
    assert result.output == "before\n"
    assert time.monotonic() - started < 3


def test_a_program_ignoring_sigterm_is_killed_after_the_grace(view) -> None:
    small = tuned(view, grace=0.3)
    code = (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('up', flush=True)\ntime.sleep(1000)"
    )
    started = time.monotonic()
    result = execute("python", code, rules=small, timeout=1.0)
    assert result.timed_out and result.exit_code == 137
    assert time.monotonic() - started < 4


def test_double_forked_daemon_that_left_the_session_is_killed(view) -> None:
    # setsid takes the daemon out of the session and process group; the subshell exiting
    # re-parents it. Only the marker scan or the subreaper can still find it.
    code = "(setsid sleep 300 >/dev/null 2>&1 &) ; echo spawned"
    result = execute("shell", code, rules=view)
    assert result.output == "spawned\n" and result.exit_code == 0
    assert marked_processes(result.sandbox_id) == []


def test_daemon_with_a_wiped_environment_is_killed(view) -> None:
    # `env -i` drops the marker variable too: the subreaper and the call's time window find it.
    code = "(env -i setsid sleep 300 >/dev/null 2>&1 &) ; sleep 0.2; echo spawned"
    started = time.monotonic()
    result = execute("shell", code, rules=view)
    assert result.output == "spawned\n"
    from capy.executor.processes import children_of

    leftovers = [
        pid
        for pid in children_of(os.getpid())
        if (info := proc_info(pid)) and info.sid != os.getsid(0) and _alive(pid)
    ]
    assert leftovers == []
    assert time.monotonic() - started < 3


def test_background_child_holding_the_pipes_does_not_stall_the_call(view) -> None:
    started = time.monotonic()
    result = execute("shell", "sleep 300 & echo quick", rules=view, timeout=20)
    assert result.output == "quick\n" and not result.timed_out
    assert time.monotonic() - started < 3


def test_python_daemon_via_double_fork_is_killed(view) -> None:
    code = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
print("parent done")
"""
    result = execute("python", code, rules=view)
    assert result.output == "parent done\n"
    assert marked_processes(result.sandbox_id) == []
