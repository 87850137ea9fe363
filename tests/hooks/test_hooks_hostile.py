"""Hostile text in what a session records: control characters and broken Unicode in a
command or a prompt must not break the session state, the PreCompact snapshot or its saving to
the knowledge base, then or at any later compaction, and the command stays readable."""

from __future__ import annotations

import json

import pytest
from hooks_helpers import wait_for_saved_sessions

from capy.hooks import handle

SESSION = "hostile-session"

# Characters that break storage or rendering: NUL (refused as binary by the indexer), other C0
# controls and DEL (terminal escapes), a lone surrogate (not encodable as UTF-8).
HOSTILE_COMMANDS = {
    "nul": "printf 'a\x00b' | xxd",
    "many-nuls": "echo " + "\x00" * 200,
    "escape-sequence": "echo \x1b]52;c;ZXZpbA==\x07 \x1b[2J",
    "del-and-bell": "echo \x7f\x07 done",
    "lone-surrogate": "echo \ud800 half a pair",
}


def send(project, event: str, **fields):
    payload = {"session_id": SESSION, "cwd": str(project), "hook_event_name": event, **fields}
    # ensure_ascii keeps a lone surrogate as a \\ud800 escape, as an agent's JSON would carry it.
    outcome = handle(event, json.dumps(payload).encode(), platform="claude-code")
    assert outcome.exit_code == 0, outcome.stderr
    return outcome


def _stored_labels(project) -> set[str]:
    from capy.store import open_store

    wait_for_saved_sessions()
    with open_store(project) as store:
        return {row[0] for row in store.conn.execute("SELECT label FROM sources")}


@pytest.mark.parametrize("command", HOSTILE_COMMANDS.values(), ids=list(HOSTILE_COMMANDS))
def test_snapshots_keep_working_after_a_hostile_command(project, command):
    send(project, "UserPromptSubmit", prompt="Run the checks")
    send(project, "PostToolUse", tool_name="Bash", tool_input={"command": command})
    for round_number in range(2):  # the first compaction and every later one
        send(project, "PostToolUse", tool_name="Bash", tool_input={"command": f"ls {round_number}"})
        outcome = send(project, "PreCompact", trigger="auto")
        assert outcome.stderr == "", outcome.stderr
    assert f"session {SESSION} snapshot" in _stored_labels(project)
    context = send(project, "SessionStart", source="compact").stdout
    snapshot = json.loads(context)["hookSpecificOutput"]["additionalContext"]
    # The command is still there, its control characters shown as escapes, not raw.
    assert "echo" in snapshot or "printf" in snapshot
    assert not any(ord(char) < 0x20 and char not in "\n\t" for char in snapshot)
    assert "\x7f" not in snapshot and "\ud800" not in snapshot


def test_a_state_recorded_before_escaping_still_snapshots(project):
    """A session whose state already holds a raw NUL (recorded by an older capy) heals."""
    from capy.config.paths import data_dir
    from capy.hooks.state import session_state

    send(project, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
    with session_state(str(data_dir()), SESSION) as state:
        state["events"]["command"].append({"at": 1.0, "text": "printf 'a\x00b'"})
    outcome = send(project, "PreCompact", trigger="auto")
    assert outcome.stderr == "", outcome.stderr
    assert f"session {SESSION} snapshot" in _stored_labels(project)
