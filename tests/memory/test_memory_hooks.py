"""Memory through real `capy hook` processes: what a session teaches is said at SessionStart and
at a relevant prompt, and a blocking anti-pattern denies its command through wrappers, while a
benign command and an unrelated prompt pass untouched."""

from __future__ import annotations

import json
from pathlib import Path

from hooks_helpers import run_hook_process

from capy.capsules.spool import drain_spool
from capy.memory import learn


def _hook(project: Path, event: str, session: str, **fields) -> dict:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": event, **fields}
    done = run_hook_process(event, json.dumps(payload).encode(), "claude-code", project)
    assert done.returncode == 0, done.stderr
    assert b"memory was not" not in done.stderr, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def _context(answer: dict) -> str:
    return answer.get("hookSpecificOutput", {}).get("additionalContext", "") or ""


def _decision(answer: dict) -> tuple[str | None, str]:
    output = answer.get("hookSpecificOutput", {})
    return output.get("permissionDecision"), output.get("permissionDecisionReason", "")


def test_a_lesson_from_one_session_is_said_and_enforced_in_the_next(project, store):
    _hook(project, "UserPromptSubmit", "s1", prompt="clean up the history on main")
    _hook(
        project,
        "PostToolUse",
        "s1",
        tool_name="Bash",
        tool_input={"command": "git push --force origin main"},
        tool_response={"stdout": "", "stderr": "(forced update)", "exit_code": 0},
    )
    _hook(
        project,
        "UserPromptSubmit",
        "s1",
        prompt="Never run `git push --force` here, it rewrote main.",
    )
    drain_spool(store)
    learn(store)

    started = _context(_hook(project, "SessionStart", "s2", source="startup"))
    assert "Never run `git push --force` here" in started
    asked = _context(
        _hook(project, "UserPromptSubmit", "s2", prompt="force push my rewritten branch")
    )
    assert "git push --force" in asked
    unrelated = _context(_hook(project, "UserPromptSubmit", "s2", prompt="draw a pelican in svg"))
    assert unrelated == ""

    bash = {"tool_name": "Bash"}
    wrapped = _hook(
        project,
        "PreToolUse",
        "s2",
        **bash,
        tool_input={"command": "timeout 5 sudo git push --force"},
    )
    decision, reason = _decision(wrapped)
    assert decision == "deny"
    assert "Never run `git push --force`" in reason and "capy memory edit" in reason
    benign = _hook(
        project, "PreToolUse", "s2", **bash, tool_input={"command": "git push origin main"}
    )
    assert _decision(benign)[0] != "deny"


def test_a_blocking_record_switched_off_lets_the_command_run(project, store):
    from capy.memory.manage import edit_record, project_records

    _hook(project, "UserPromptSubmit", "s1", prompt="Do not run `terraform destroy` in this repo.")
    drain_spool(store)
    [record] = project_records(store)
    bash = {"tool_name": "Bash", "tool_input": {"command": "terraform destroy -auto-approve"}}
    assert _decision(_hook(project, "PreToolUse", "s2", **bash))[0] == "deny"
    edit_record(store, record["id"], block=False)
    assert _decision(_hook(project, "PreToolUse", "s2", **bash))[0] != "deny"


def test_a_broken_digest_is_silence_not_an_error(project, store):
    from capy.config import load_settings
    from capy.memory.digest import BLOCKING, digest_path

    data_dir = str(load_settings(project).settings.data_dir)
    for part in ("", BLOCKING):
        path = Path(digest_path(data_dir, str(project), part))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{not json", encoding="utf-8")
    answer = _hook(project, "PreToolUse", "s1", tool_name="Bash", tool_input={"command": "ls"})
    assert _decision(answer)[0] != "deny"
    assert _context(_hook(project, "UserPromptSubmit", "s1", prompt="push the branch")) == ""


def test_a_shown_rule_is_credited_by_a_related_success_and_blamed_when_its_error_recurs(
    project, store
):
    from memory_helpers import push_episode

    store.write(push_episode("s1"))
    learn(store)
    bash = {"tool_name": "Bash"}
    for session, follow in (
        (
            "s2",
            {
                "tool_response": {"stdout": "ok", "exit_code": 0},
                "event": "PostToolUse",
                "command": "git pull --rebase origin checkout",
            },
        ),
        (
            "s3",
            {
                "error": " ! [rejected] main -> main (non-fast-forward)",
                "event": "PostToolUseFailure",
                "command": "git push origin main",
            },
        ),
    ):
        shown = _context(
            _hook(project, "UserPromptSubmit", session, prompt="push my branch to origin")
        )
        assert "git pull --rebase" in shown
        event = follow.pop("event")
        command = follow.pop("command")
        _hook(project, event, session, **bash, tool_input={"command": command}, **follow)
    drain_spool(store)
    learn(store)
    from capy.memory import records_of

    [rule] = [record for record in records_of(store) if record["type"] == "rule"]
    assert (rule["helpful"], rule["harmful"]) == (1, 1)


def test_a_shown_rule_the_user_corrects_against_is_harmful_even_after_a_success(project, store):
    from memory_helpers import push_episode

    store.write(push_episode("s1"))
    learn(store)
    shown = _context(_hook(project, "UserPromptSubmit", "s2", prompt="push my branch to origin"))
    assert "git pull --rebase" in shown
    _hook(
        project,
        "PostToolUse",
        "s2",
        tool_name="Bash",
        tool_input={"command": "git pull --rebase origin release"},
        tool_response={"stdout": "Successfully rebased", "exit_code": 0},
    )
    _hook(
        project,
        "UserPromptSubmit",
        "s2",
        prompt="No, don't rebase the release branch with git pull --rebase, merge origin instead.",
    )
    drain_spool(store)
    learn(store)
    from capy.memory import records_of

    [rule] = [record for record in records_of(store) if record["type"] == "rule"]
    assert (rule["helpful"], rule["harmful"]) == (0, 1)
