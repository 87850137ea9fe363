"""Background mode: the process outlives the timeout, is tracked, and ends with capy."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from capy.executor import ExecutorError, execute, jobs, shutdown_background
from capy.executor.background import job, stop_job
from capy.executor.processes import marked_processes, proc_info
from tests.executor.conftest import tuned


def _running(pid: int) -> bool:
    info = proc_info(pid)
    return info is not None and info.state != "Z"


def test_background_job_returns_partial_output_and_keeps_running(view) -> None:
    code = "echo started; sleep 0.8; echo later; sleep 300"
    result = execute("shell", code, rules=view, timeout=0.4, background=True)
    assert result.background and result.pid and result.exit_code is None
    assert result.output == "started\n" and not result.timed_out
    assert _running(result.pid)
    time.sleep(1.0)
    assert job(result.pid).output_tail() == "later\n"
    assert shutdown_background(grace=0.2) == 1
    assert not _running(result.pid)
    assert marked_processes(result.sandbox_id) == []
    assert not any(found.running for found in jobs())


def test_a_job_that_finishes_before_the_timeout_is_an_ordinary_result(view) -> None:
    result = execute("shell", "echo quick", rules=view, timeout=5, background=True)
    assert not result.background and result.pid is None and result.exit_code == 0


def test_stop_job_ends_one_job(view) -> None:
    result = execute("shell", "sleep 300", rules=view, timeout=0.2, background=True)
    assert stop_job(result.pid, grace=0.2)
    assert not _running(result.pid)
    assert not stop_job(999_999_999)


def test_job_limit_is_enforced(view) -> None:
    small = tuned(view, max_jobs=1)
    execute("shell", "sleep 300", rules=small, timeout=0.2, background=True)
    with pytest.raises(ExecutorError, match=r"1 background jobs are already running"):
        execute("shell", "sleep 300", rules=small, timeout=0.2, background=True)


def test_jobs_past_their_maximum_runtime_are_killed(view) -> None:
    small = tuned(view, max_runtime=1, grace=0.2)
    result = execute("shell", "sleep 300", rules=small, timeout=0.2, background=True)
    found = job(result.pid)
    assert found.finished.wait(5)
    assert found.exit_code is not None and not _running(result.pid)


def test_background_jobs_die_with_the_capy_process(tmp_path) -> None:
    # A real interpreter that starts a job and exits normally: the atexit hook must kill it.
    script = (
        "from capy.executor import execute\n"
        "r = execute('shell', 'sleep 300', timeout=0.2, background=True)\n"
        "print(r.pid, r.sandbox_id)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    pid, marker = done.stdout.split()
    assert not _running(int(pid))
    assert marked_processes(marker) == []
