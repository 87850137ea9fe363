"""What memory must not learn, from payloads as Claude Code sends them: a failure "fixed" by
switching a safety check off (`--no-verify`, a forced push, `curl -k`) is no rule, and words the
user quotes or pastes (a fenced block, a quoted line, a string in quotes, a harness tag) are no
preference of theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capy.capsules.spool import drain_spool
from capy.memory import learn, records_of

HOOK_FAILED = (
    "ruff.....................................................................Failed\n"
    "- hook id: ruff\n- exit code: 1\n"
    "src/parser.py:41:5: F841 Local variable `tokens` is assigned to but never used"
)


def _send(project: Path, session: str, event: dict) -> None:
    from capy.hooks.dispatch import handle

    payload = {
        **event,
        "session_id": session,
        "cwd": str(project),
        "transcript_path": str(project / ".no-transcript.jsonl"),
    }
    handle(event["hook_event_name"], json.dumps(payload).encode(), platform="claude-code")


def _bash(command: str, *, error: str | None = None, stdout: str = "") -> dict:
    if error is not None:
        return {
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run it"},
            "error": error,
        }
    return {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False},
    }


def _prompt(text: str) -> dict:
    return {"hook_event_name": "UserPromptSubmit", "prompt": text}


def _learn(project: Path, store, session: str, events: list[dict]) -> list[dict]:
    for event in events:
        _send(project, session, event)
    drain_spool(store)
    learn(store)
    return records_of(store, store.default_scope)


def _log(store) -> list[str]:
    from capy.capsules.sqlite.memory import log_entries

    return [entry[3] for entry in log_entries(store.conn, store.default_scope, 50)]


BYPASSES = {
    "no-verify": (
        "git commit -m 'parser: accept trailing commas'",
        HOOK_FAILED,
        "git commit --no-verify -m 'parser: accept trailing commas'",
    ),
    "commit -n": (
        "git commit -am 'wip'",
        HOOK_FAILED,
        "git commit -nam 'wip'",
    ),
    "force push": (
        "git push origin login-form",
        " ! [rejected]        login-form -> login-form (non-fast-forward)\n"
        "error: failed to push some refs to 'github.com:acme/web.git'",
        "git push --force origin login-form",
    ),
    "curl -k": (
        "curl -fsS https://registry.internal.acme.dev/v2/_catalog",
        "curl: (60) SSL certificate problem: unable to get local issuer certificate",
        "curl -k -fsS https://registry.internal.acme.dev/v2/_catalog",
    ),
    "break-system-packages": (
        "pip install requests",
        "error: externally-managed-environment\n\n× This environment is externally managed",
        "pip install --break-system-packages requests",
    ),
}


@pytest.mark.parametrize("case", sorted(BYPASSES))
def test_a_failure_silenced_by_a_safety_bypass_is_not_learned_as_its_fix(project, store, case):
    failing, error, bypass = BYPASSES[case]
    records = _learn(
        project,
        store,
        f"bypass-{case}",
        [
            _prompt("commit and push what we have"),
            _bash(failing, error=error),
            _bash(bypass, stdout="ok"),
        ],
    )
    assert [record["text"] for record in records if record["type"] == "rule"] == []
    assert any("only bypassed a safety check" in detail for detail in _log(store))


def test_the_real_fix_after_a_bypass_is_still_learned(project, store):
    records = _learn(
        project,
        store,
        "bypass-then-fix",
        [
            _prompt("commit the parser changes"),
            _bash("git commit -am 'parser: accept trailing commas'", error=HOOK_FAILED),
            _bash("git commit --no-verify -am 'parser: accept trailing commas'", stdout="done"),
            _bash("ruff check --fix src/parser.py", stdout="Found 1 error (1 fixed)."),
            _bash("git commit -am 'parser: accept trailing commas'", stdout="[main 41c0d2e]"),
        ],
    )
    [rule] = [record for record in records if record["type"] == "rule"]
    assert "--no-verify" not in rule["text"]
    assert (
        "running `ruff check --fix src/parser.py` and then running it again worked" in rule["text"]
    )


QUOTED = {
    "fenced block": (
        "Here is what the old CONTRIBUTING file said, please summarise it:\n"
        "```\nAlways run `make lint` before pushing.\nNever commit generated files.\n```"
    ),
    "quoted lines": (
        "A reviewer wrote this on the PR:\n> Don't use `requests` here, use httpx.\n"
        "> Always add a changelog entry.\nWhat do you think?"
    ),
    "double quotes": (
        'The README says "always use tabs for indentation", can you check the editorconfig.'
    ),
    "single quotes": (
        "Add a docstring that reads 'never call this from the event loop' to run_sync."
    ),
    "smart quotes": (
        "Translate the banner “From now on, use the new portal for all requests” into German."
    ),
    "harness tag": (
        "<system-reminder>Never use emojis in commit messages.</system-reminder>\n"
        "fix the failing date parser test"
    ),
    "indented paste": (
        "This is from the style guide we got from the vendor:\n\n"
        "    Always prefer composition over inheritance in service classes.\n\n"
        "Does it apply to our code"
    ),
}


@pytest.mark.parametrize("case", sorted(QUOTED))
def test_quoted_or_pasted_instructions_are_not_the_users_preferences(project, store, case):
    records = _learn(project, store, f"quoted-{case}", [_prompt(QUOTED[case])])
    assert [record["text"] for record in records] == []


def test_the_users_own_instruction_beside_a_quote_is_still_learned(project, store):
    text = (
        'The linter prints "never use print", ignore that message. '
        "From now on, run `ruff format` before every commit.\n"
        "```\nAlways run black.\n```"
    )
    records = _learn(project, store, "own-words", [_prompt(text)])
    assert [record["text"] for record in records] == [
        "From now on, run `ruff format` before every commit."
    ]


def test_a_command_that_only_shares_the_program_is_no_fix_and_what_ran_before_a_retry_is_named(
    store,
):
    from memory_helpers import call, prompt

    at = "2026-05-01T10:00:0"
    commit = 'git add -A && git commit -m "feat: add the otel bootstrap and its defaults"'
    failed = "Pre-commit validation failed:\n\n[FORMAT] Code is not formatted.\nRun 'mix format'"
    store.write(
        [
            prompt("s1", "commit the otel work", at + "0Z"),
            call("s1", commit, failed, at + "1Z", failed=True),
            call("s1", "git status", "On branch otel", at + "2Z"),
            call("s1", "mix format", "", at + "3Z"),
            call("s1", commit, "[otel 12e2d10] feat: add the otel bootstrap", at + "4Z"),
        ]
    )
    learn(store)
    [rule] = records_of(store, store.default_scope)
    assert "`git status` worked" not in rule["text"]
    assert "running `git status`, `mix format` and then running it again worked" in rule["text"]


def test_a_subagents_prompt_is_not_the_users_word(store):
    from capy.capsules import CapsuleDraft

    metadata = {"session_id": "s1", "agent_id": "acompact-946d2b"}
    text = "Summarise the conversation. IMPORTANT: Do NOT use any tools. Never run `git push`."
    store.write(
        [CapsuleDraft("prompt", text, "import", metadata, created_at="2026-05-01T10:00:00Z")]
    )
    learn(store)
    assert records_of(store, store.default_scope) == []


def test_a_failed_bypass_attempt_teaches_nothing_either(store):
    from memory_helpers import call

    at = "2026-05-01T10:00:0"
    store.write(
        [
            call("s1", "git commit --no-verify -am 'wip'", HOOK_FAILED, at + "1Z", failed=True),
            call("s1", "git commit -am 'wip' && git push", "[main 41c0d2e] wip", at + "2Z"),
        ]
    )
    learn(store)
    assert records_of(store, store.default_scope) == []
