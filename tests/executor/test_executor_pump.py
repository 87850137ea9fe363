"""The pump keeps what a child wrote, whatever stops it: a stop never drops buffered output."""

from __future__ import annotations

import subprocess
import time

import pytest

from capy.executor.pump import Pump, Stop


@pytest.fixture
def chatty_sleeper():
    """A child that has written a line and then waits; killed and reaped afterwards."""
    proc = subprocess.Popen(
        ["sh", "-c", "echo written-before-the-stop; exec sleep 30"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    yield proc
    proc.kill()
    proc.wait()


def test_output_waiting_in_the_pipe_survives_a_process_limit_stop(chatty_sleeper) -> None:
    pump = Pump(chatty_sleeper, cap_bytes=1 << 20, over_process_limit=lambda: True)
    try:
        time.sleep(0.4)  # the line is in the pipe and the first watchdog tick is due
        assert pump.run_until(time.monotonic() + 10) is Stop.PROCESS_LIMIT
        assert bytes(pump.stdout) == b"written-before-the-stop\n"
    finally:
        pump.close()
