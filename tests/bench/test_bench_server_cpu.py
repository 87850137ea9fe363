"""CPU per tool call read from outside the server (capy.bench.server_cpu), on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from capy.bench.server_cpu import CallCpu, child_with, cpu_ns

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread CPU time is read from Linux's /proc"
)


def test_a_process_cpu_grows_with_its_work_not_with_waiting():
    meter = CallCpu(os.getpid())
    meter.start()
    time.sleep(0.05)
    waited = meter.stop()
    meter.start()
    deadline = time.thread_time() + 0.05
    while time.thread_time() < deadline:
        pass
    worked = meter.stop()
    assert waited is not None and worked is not None
    assert waited < 20 <= worked


def test_the_server_a_client_spawned_is_found_by_its_command_line():
    marker = "capy-bench-cpu-probe"
    child = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time; '{marker}'; sys.stdin.read()"],
        stdin=subprocess.PIPE,
    )
    try:
        found = None
        for _ in range(100):  # the child's command line is readable once it has started
            found = child_with(marker.encode())
            if found:
                break
            time.sleep(0.02)
        assert found == child.pid
        assert cpu_ns(found) is not None and cpu_ns(found) > 0
    finally:
        child.communicate(b"")
    assert child_with(b"no process was started with this") is None
    assert cpu_ns(None) is None
