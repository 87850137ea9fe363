"""A session's savings file: written after each call, read back by another process."""

from __future__ import annotations

import json
import shutil

from capy.api.reply import ToolReply
from capy.api.stats import SessionStats


def test_each_call_is_saved_and_a_removed_folder_is_made_again(tmp_path):
    path = tmp_path / "sessions" / "s-1.json"
    stats = SessionStats(session_id="s-1", started_at=1.0, path=path)
    stats.record("capy_execute", ToolReply("hi", processed_bytes=300))
    saved = json.loads(path.read_text())
    assert saved["tools"]["capy_execute"] == {
        "calls": 1,
        "errors": 0,
        "processed_bytes": 300,
        "returned_bytes": len("hi"),
        "cache_hits": 0,
    }
    shutil.rmtree(path.parent)  # a cleanup between two calls
    stats.record("capy_execute", ToolReply("hi", processed_bytes=300, is_error=True))
    again = SessionStats.from_dict(json.loads(path.read_text()))
    assert again.tools["capy_execute"].calls == 2
    assert again.totals().errors == 1
    assert stats.path == path  # still saving, not given up as unwritable
