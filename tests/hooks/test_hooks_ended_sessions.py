"""SessionEnd hands the session over to the detached drainer (capy.hooks.ended_sessions): a
record on disk before the hook answers, saved to the knowledge base by whichever drainer runs
next, removed only once saved, never saved twice."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys

from hooks_helpers import run_hook_process, wait_for_saved_sessions

from capy.config.paths import data_dir
from capy.hooks import handle
from capy.hooks.ended_sessions import COMPACTED, RECORDS, hand_over, save_session_records
from capy.hooks.state import read_state
from capy.store import open_store

SESSION = "ended-session-1"


def _edit(project, name: str = "parser.py", session: str = SESSION) -> None:
    payload = {
        "session_id": session,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{project}/src/{name}", "old_string": "a", "new_string": "b"},
        "tool_response": {},
    }
    outcome = handle("PostToolUse", json.dumps(payload).encode(), platform="claude-code")
    assert outcome.exit_code == 0


def _sessions():
    return data_dir() / "hooks" / "sessions"


def _records() -> list:
    return sorted(path for path in _sessions().iterdir() if path.name.endswith(RECORDS))


def _labels(project) -> list[str]:
    with open_store(project) as store:
        return [row[0] for row in store.conn.execute("SELECT label FROM sources ORDER BY label")]


def test_the_record_outlives_a_stop_and_the_next_drainer_saves_it(project):
    """The hook's part alone (as if the machine stopped before any drainer ran): the record is
    private, the state is gone, and a later drainer saves it and removes it."""
    _edit(project)
    state = read_state(str(data_dir()), SESSION)
    assert hand_over(str(data_dir()), str(project), SESSION, state) is True
    [record] = _records()
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert not any(path.name.endswith(".json") for path in _sessions().iterdir())
    assert _labels(project) == []
    drain = [sys.executable, "-m", "capy.capsules.drain", str(project), "--sessions-only"]
    process = subprocess.run(drain, cwd=project, capture_output=True, timeout=120)
    assert (process.returncode, process.stderr) == (0, b"")
    assert _records() == []
    assert _labels(project) == [f"session {SESSION} events"]


def test_session_end_with_capture_off_is_saved_by_its_drainer(project):
    (project / ".capy.toml").write_text("[hooks]\ncapture = false\n")
    _edit(project)
    body = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionEnd"}
    process = run_hook_process("SessionEnd", json.dumps(body).encode(), "claude-code", project)
    assert (process.returncode, process.stdout, process.stderr) == (0, b"", b"")
    wait_for_saved_sessions()
    assert _labels(project) == [f"session {SESSION} events"]


def test_a_locked_database_leaves_the_record_for_a_later_drainer(project):
    _edit(project)
    hand_over(str(data_dir()), str(project), SESSION, read_state(str(data_dir()), SESSION))
    with open_store(project) as store:
        store.conn.execute("BEGIN EXCLUSIVE")
        drain = [sys.executable, "-m", "capy.capsules.drain", str(project), "--sessions-only"]
        process = subprocess.run(drain, cwd=project, capture_output=True, timeout=120)
        store.conn.execute("ROLLBACK")
    assert process.returncode == 0, process.stderr
    assert len(_records()) == 1, "a record that could not be saved stays"
    assert save_session_records(str(data_dir())) == 1
    assert _records() == [] and _labels(project) == [f"session {SESSION} events"]


def test_a_record_another_drainer_holds_is_left_to_it(project):
    _edit(project)
    hand_over(str(data_dir()), str(project), SESSION, read_state(str(data_dir()), SESSION))
    [record] = _records()
    held = os.open(record, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert save_session_records(str(data_dir())) == 0
        assert _records() == [record]
    finally:
        os.close(held)
    assert save_session_records(str(data_dir())) == 1
    assert save_session_records(str(data_dir())) == 0


def test_a_resumed_session_s_two_ends_are_both_saved_in_order(project):
    _edit(project, "first.py")
    hand_over(str(data_dir()), str(project), SESSION, read_state(str(data_dir()), SESSION))
    _edit(project, "second.py")
    assert "first.py" not in json.dumps(read_state(str(data_dir()), SESSION))
    hand_over(str(data_dir()), str(project), SESSION, read_state(str(data_dir()), SESSION))
    assert len(_records()) == 2
    assert save_session_records(str(data_dir())) == 2
    with open_store(project) as store:
        [text] = [row[0] for row in store.conn.execute("SELECT content FROM chunks")]
    assert "second.py" in text, "the later end is what the label holds"


def test_a_session_without_events_leaves_no_record(project):
    body = {"session_id": SESSION, "cwd": str(project), "hook_event_name": "SessionEnd"}
    assert handle("SessionEnd", json.dumps(body).encode(), platform="claude-code").exit_code == 0
    assert not _sessions().exists() or _records() == []


def test_a_compaction_s_record_keeps_the_state_and_saves_the_snapshot(project):
    _edit(project)
    state = read_state(str(data_dir()), SESSION)
    hand_over(str(data_dir()), str(project), SESSION, state, "the snapshot of parser.py")
    assert [path.suffix for path in _records()] == [COMPACTED]
    assert read_state(str(data_dir()), SESSION)["events"], "the session goes on with its state"
    assert save_session_records(str(data_dir())) == 1
    assert _labels(project) == [f"session {SESSION} events", f"session {SESSION} snapshot"]
