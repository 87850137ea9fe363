"""Background work waits for the process's tool calls: during one, and a quiet time after."""

from __future__ import annotations

import threading
import time

from capy.foreground import foreground_call, wait_until_quiet


def _waiter(quiet_s: float, stop: threading.Event | None = None) -> tuple[threading.Thread, list]:
    returned: list[float] = []

    def wait() -> None:
        wait_until_quiet(quiet_s, stop)
        returned.append(time.monotonic())

    thread = threading.Thread(target=wait)
    thread.start()
    return thread, returned


def test_a_waiter_returns_only_a_quiet_time_after_the_call_ended() -> None:
    with foreground_call():
        thread, returned = _waiter(0.2)
        time.sleep(0.3)
        assert not returned  # still inside the call
        ended = time.monotonic()
    thread.join(timeout=5)
    assert returned and returned[0] - ended >= 0.19


def test_stop_ends_the_wait_and_no_wait_without_calls() -> None:
    stop = threading.Event()
    with foreground_call():
        thread, returned = _waiter(60.0, stop)
        stop.set()
        thread.join(timeout=5)
        assert returned  # let go at once, though the call still runs
    wait_until_quiet(0.0)  # 0: never waits
    started = time.monotonic()
    with foreground_call():
        pass
    time.sleep(0.05)
    wait_until_quiet(0.05)
    assert time.monotonic() - started < 1.0
