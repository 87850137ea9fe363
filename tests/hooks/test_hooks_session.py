"""Session continuity: events recorded per session, a PreCompact snapshot within budget and in
priority order, saved to the knowledge base and re-injected once after the compaction."""

from __future__ import annotations

import json

from hooks_helpers import run_hook_process, wait_for_saved_sessions

from capy.hooks import handle

SESSION = "0b1c2d3e-session"


def send(event: str, project, **fields) -> dict:
    payload = {"session_id": SESSION, "cwd": str(project), "hook_event_name": event, **fields}
    outcome = handle(event, json.dumps(payload).encode(), platform="claude-code")
    assert outcome.exit_code == 0, outcome.stderr
    return json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {}


def post(project, tool: str, **tool_input) -> None:
    send("PostToolUse", project, tool_name=tool, tool_input=tool_input, tool_response={})


def work_a_little(project) -> None:
    send("UserPromptSubmit", project, prompt="Fix the flaky parser test, keep the API.")
    for name in ("parser.py", "lexer.py", "parser.py"):
        post(project, "Edit", file_path=f"{project}/src/{name}", old_string="a", new_string="b")
    post(project, "Bash", command="git commit -m 'Fix parser'")
    post(project, "Bash", command="pytest -q tests/test_parser.py")
    post(project, "TodoWrite", todos=[{"content": "Fix parser", "status": "in_progress"}])
    send(
        "PostToolUseFailure",
        project,
        tool_name="Bash",
        tool_input={"command": "pytest -q"},
        error="AssertionError: expected 3 tokens, got 2",
    )


def test_snapshot_is_reinjected_once_after_compaction(project):
    work_a_little(project)
    assert send("PreCompact", project, trigger="auto") == {}  # Claude Code takes no context here
    context = send("SessionStart", project, source="compact")["additionalContext"]
    assert context.startswith("## capy: keep raw output out of your context")
    snapshot = context[context.index("Snapshot of this session") :]
    sections = [line for line in snapshot.splitlines() if line.startswith("## ")]
    assert sections == [
        "## todo",
        "## error",
        "## file-edit",
        "## user-prompt",
        "## git",
        "## command",
    ]
    assert "expected 3 tokens, got 2" in snapshot
    assert snapshot.count("src/parser.py") == 1  # an edited file is one line, however often
    assert "8 events recorded" in snapshot
    again = send("SessionStart", project, source="compact")["additionalContext"]
    assert "Snapshot of this session" not in again


def test_snapshot_stays_within_budget_and_keeps_the_priorities(project):
    send("UserPromptSubmit", project, prompt="Refactor " + "everything " * 80)
    post(
        project,
        "TodoWrite",
        todos=[{"content": f"step {i}", "status": "pending"} for i in range(60)],
    )
    for index in range(120):
        post(
            project, "Edit", file_path=f"{project}/src/module_{index:03d}/" + "deep/" * 10 + "f.py"
        )
    for index in range(50):
        post(project, "Grep", pattern=f"needle_{index}")
    send("PreCompact", project, trigger="manual")
    context = send("SessionStart", project, source="compact")["additionalContext"]
    snapshot = context[context.index("Snapshot of this session") :]
    assert len(snapshot.encode()) <= 2048
    assert snapshot.index("## todo") < snapshot.index("## file-edit")
    assert "module_119" in snapshot  # the newest edits win the room


def test_precompact_saves_the_session_to_the_knowledge_base(project):
    work_a_little(project)
    process = run_hook_process(
        "PreCompact",
        json.dumps(
            {"session_id": SESSION, "cwd": str(project), "hook_event_name": "PreCompact"}
        ).encode(),
        "claude-code",
        project,
    )
    assert process.returncode == 0 and process.stderr == b""
    from capy.store import open_store
    from capy.store.corpus import search_store

    wait_for_saved_sessions()  # by the drainer the hook started, after its exit
    with open_store(project) as store:
        rows = store.conn.execute("SELECT label, kind FROM sources ORDER BY label").fetchall()
        [found] = search_store(store, ["lexer"], kinds=["session"])
    assert rows == [
        (f"session {SESSION} events", "session"),
        (f"session {SESSION} snapshot", "session"),
    ]
    assert found.hits, "the recorded edit of lexer.py is searchable"


def test_session_end_saves_the_events(project):
    """Saved by the drainer the hook starts (capy.hooks.ended_sessions), after its answer."""
    from capy.config.paths import data_dir
    from capy.store import open_store

    work_a_little(project)
    assert send("SessionEnd", project, reason="exit") == {}
    wait_for_saved_sessions()
    assert list((data_dir() / "hooks" / "sessions").iterdir()) == []  # state and record gone
    with open_store(project) as store:
        labels = [row[0] for row in store.conn.execute("SELECT label FROM sources")]
    assert labels == [f"session {SESSION} events"]


def test_session_start_cap_from_config(project):
    (project / ".capy.toml").write_text("[hooks]\nsession_start_max_bytes = 0\n")
    assert send("SessionStart", project, source="startup") == {}
    (project / ".capy.toml").write_text("[hooks]\nsession_start_max_bytes = 200\n")
    context = send("SessionStart", project, source="startup")["additionalContext"]
    assert 0 < len(context.encode()) <= 200
