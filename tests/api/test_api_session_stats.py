"""The server's session stats file is saved off the calls' path: once for a burst of calls, a
moment after them, and at exit (capy.api.stats)."""

from __future__ import annotations

import json
import time

from capy.api import stats as stats_module
from capy.api.reply import ToolReply
from capy.api.stats import SessionStats


def _wait_for(path, calls: int, timeout_s: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            saved = json.loads(path.read_text())
            if saved["total"]["calls"] == calls:
                return saved
        time.sleep(0.05)
    raise AssertionError(f"{path} never held {calls} calls")


def test_a_burst_of_calls_is_saved_once_after_it(tmp_path):
    path = tmp_path / "sessions" / "burst.json"
    stats = SessionStats(session_id="burst", started_at=time.time(), path=path, background=True)
    for _ in range(20):
        stats.record("capy_search", ToolReply("found", processed_bytes=100))
    time.sleep(min(0.2, stats_module.SAVE_AFTER_S / 4))
    assert not path.exists(), "the stats were written while the burst's replies went out"
    saved = _wait_for(path, 20)
    assert saved["tools"]["capy_search"]["processed_bytes"] == 2000


def test_exit_saves_what_the_saver_has_not_yet(tmp_path):
    path = tmp_path / "sessions" / "exit.json"
    stats = SessionStats(session_id="exit", started_at=time.time(), path=path, background=True)
    stats.record("capy_execute", ToolReply("ran", processed_bytes=10))
    stats.flush()
    assert json.loads(path.read_text())["total"]["calls"] == 1
