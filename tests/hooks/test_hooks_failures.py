"""No input makes a hook fail the agent: bad stdin, unknown names, broken packs or config, an
unusable data dir, a locked state or database all pass the call through with one stderr line,
and the payload (which can hold secrets) is never echoed."""

from __future__ import annotations

import json
import os

import pytest
from hooks_helpers import run_hook_process

from capy.hooks import handle

SECRET = "ghp_NotARealToken0000000000000000000000"


def bash_payload(
    project, command: str = f"curl -H 'Authorization: {SECRET}' https://x.example"
) -> bytes:
    body = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    return json.dumps(body).encode()


def assert_pass_through(outcome, *, says: str) -> None:
    stdout = outcome.stdout if isinstance(outcome.stdout, str) else outcome.stdout.decode()
    stderr = outcome.stderr if isinstance(outcome.stderr, str) else outcome.stderr.decode()
    code = getattr(outcome, "exit_code", getattr(outcome, "returncode", None))
    assert (code, stdout) == (0, "")
    assert stderr.count("\n") == 1 and stderr.startswith("capy hook: ")
    assert says in stderr
    assert SECRET not in stderr


@pytest.mark.parametrize(
    ("stdin", "says"),
    [
        (b"", "empty input"),
        (b"   \n", "empty input"),
        (b"{not json " + SECRET.encode(), "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        (b'["a", "' + SECRET.encode() + b'"]', "not a JSON object"),
    ],
)
def test_bad_stdin_passes_through(stdin, says, project):
    assert_pass_through(run_hook_process("PreToolUse", stdin, "claude-code", project), says=says)


def test_unknown_platform_and_event(project):
    assert_pass_through(
        handle("PreToolUse", bash_payload(project), platform="emacs"),
        says="unknown platform 'emacs'",
    )
    assert_pass_through(
        handle("BeforeTool", bash_payload(project), platform="claude-code"),
        says="no hook event 'BeforeTool'",
    )


def test_payload_without_tool_fields_passes_quietly(project):
    outcome = handle(
        "PreToolUse",
        json.dumps({"session_id": "s", "tool_input": "nope"}).encode(),
        platform="claude-code",
    )
    assert (outcome.stdout, outcome.stderr, outcome.exit_code) == ("", "", 0)


def test_broken_overlay_pack_passes_through(project, project_rules_dir):
    (project_rules_dir / "broken.yaml").write_text("pack: broken\nschema: overlay.v1\nextends: [\n")
    process = run_hook_process("PreToolUse", bash_payload(project), "claude-code", project)
    assert_pass_through(process, says="rule packs have errors")
    # fixed again: the next call notices the changed file and routes as usual
    (project_rules_dir / "broken.yaml").unlink()
    assert (
        b"updatedInput"
        in run_hook_process("PreToolUse", bash_payload(project), "claude-code", project).stdout
    )


def test_broken_config_passes_through(project):
    (project / ".capy.toml").write_text("[hooks]\nguidance = 'sometimes'\n")
    assert_pass_through(
        handle("PreToolUse", bash_payload(project), platform="claude-code"),
        says="configuration has errors",
    )


def test_unusable_data_dir_still_routes(project, monkeypatch):
    """A data dir that cannot hold files (here a plain file stands where the folder should be;
    permission bits do not stop root) costs the cache and the state, not the answer."""
    blocked = project / "not-a-dir"
    blocked.write_text("")
    monkeypatch.setenv("CAPY_DATA_DIR", str(blocked))
    curl = handle("PreToolUse", bash_payload(project), platform="claude-code")
    assert "updatedInput" in curl.stdout and curl.exit_code == 0
    plain = handle("PreToolUse", bash_payload(project, "make"), platform="claude-code")
    assert plain.stdout == "" and plain.exit_code == 0
    assert plain.stderr.startswith("capy hook: guidance skipped") and plain.stderr.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_read_only_data_dir_still_routes(project, monkeypatch, tmp_path):
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    readonly.chmod(0o500)
    monkeypatch.setenv("XDG_DATA_HOME", str(readonly))
    outcome = handle("PreToolUse", bash_payload(project), platform="claude-code")
    assert "updatedInput" in outcome.stdout and outcome.exit_code == 0


def test_locked_state_skips_the_guidance(project, monkeypatch):
    import fcntl

    from capy.config.paths import data_dir
    from capy.hooks import state

    monkeypatch.setattr(state, "LOCK_WAIT_SECONDS", 0.2)
    lock_path = state.state_path(str(data_dir()), "s")[: -len(".json")] + ".lock"
    os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    with open(lock_path, "w") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        outcome = handle("PreToolUse", bash_payload(project, "make"), platform="claude-code")
    assert (outcome.stdout, outcome.exit_code) == ("", 0)
    assert "guidance skipped" in outcome.stderr and "StateBusy" in outcome.stderr


def test_locked_database_still_takes_the_snapshot(project):
    from capy.store import open_store

    body = {"session_id": "s", "cwd": str(project)}
    edit = {
        **body,
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": "/src/a.py"},
    }
    assert handle("PostToolUse", json.dumps(edit).encode(), platform="opencode").exit_code == 0
    handle("PostToolUse", json.dumps(edit).encode(), platform="claude-code")
    with open_store(project) as store:
        store.conn.execute("PRAGMA busy_timeout = 0")
        store.conn.execute("BEGIN EXCLUSIVE")
        compact = {**body, "hook_event_name": "PreCompact"}
        process = run_hook_process(
            "PreCompact", json.dumps(compact).encode(), "claude-code", project
        )
        store.conn.execute("ROLLBACK")
    # The hook does not open the store: the drainer saves the session once the lock is gone.
    assert (process.returncode, process.stdout, process.stderr) == (0, b"", b"")
    start = {**body, "hook_event_name": "SessionStart", "source": "compact"}
    context = json.loads(
        handle("SessionStart", json.dumps(start).encode(), platform="claude-code").stdout
    )
    assert "/src/a.py" in context["hookSpecificOutput"]["additionalContext"]


def test_missing_database_is_created_not_a_failure(project):
    body = {"session_id": "s", "cwd": str(project), "hook_event_name": "SessionEnd"}
    edit = {
        **body,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/n.py"},
    }
    handle("PostToolUse", json.dumps(edit).encode(), platform="claude-code")
    outcome = handle("SessionEnd", json.dumps(body).encode(), platform="claude-code")
    assert (outcome.stdout, outcome.stderr, outcome.exit_code) == ("", "", 0)
