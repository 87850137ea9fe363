"""Capsule capture from real `capy hook` processes: what each event spools, that secrets never
reach the spool or the log, and that draining moves every record into the log once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hooks_helpers import run_hook_process
from planted_secrets import fake_private_key, fresh_secrets, log_lines, planted_text, raw_in

from capy.capsules import open_capsules
from capy.capsules.spool import drain_spool, drain_spool_report, spool_path
from capy.spooling import read_records

SESSION = "capture-session"
TRANSCRIPTS = ("claude-transcripts", "spotter")


def _payload(project: Path, event: str, **fields) -> bytes:
    common = {"session_id": SESSION, "cwd": str(project), "hook_event_name": event}
    return json.dumps({**common, **fields}).encode()


def _hook(project: Path, event: str, platform: str = "claude-code", **fields) -> None:
    done = run_hook_process(event, _payload(project, event, **fields), platform, project)
    assert done.returncode == 0, done.stderr
    assert b"capsule was not captured" not in done.stderr, done.stderr


def _spool(project: Path) -> Path:
    with open_capsules(project_dir=project) as store:
        return spool_path(store)


def _spooled(project: Path) -> list[dict]:
    path = _spool(project)
    return read_records(path.read_bytes())[0] if path.exists() else []


def _logged(project: Path) -> list[tuple[str, str, str, dict]]:
    with open_capsules(project_dir=project) as store:
        drain_spool(store)
        rows = store.conn.execute(
            "SELECT kind, source, content, metadata FROM capsules ORDER BY n"
        ).fetchall()
        assert all(report.ok for report in store.verify())
    return [(kind, source, content, json.loads(meta)) for kind, source, content, meta in rows]


def test_each_event_spools_its_kind_and_the_drain_logs_them(project, shared_testdata):
    transcript = shared_testdata(*TRANSCRIPTS, "short.jsonl")
    _hook(project, "SessionStart", source="startup")
    _hook(project, "UserPromptSubmit", prompt="Make the parser accept tabs.")
    _hook(
        project,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "pytest -q tests/parser"},
        tool_response={"stdout": "3 passed in 0.12s", "stderr": "", "interrupted": False},
        tool_use_id="toolu_01",
    )
    _hook(
        project,
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "make lint"},
        error="make: *** No rule to make target 'lint'.  Stop.",
    )
    _hook(project, "Stop", transcript_path=str(transcript))
    spooled = [record["kind"] for record in _spooled(project)]
    assert spooled == ["note", "prompt", "tool_call", "error", "response"]
    assert oct(_spool(project).stat().st_mode & 0o777) == "0o600"

    logged = _logged(project)
    assert [kind for kind, *_ in logged] == spooled
    assert {source for _, source, *_ in logged} == {"hook"}
    kinds = {kind: (content, meta) for kind, _, content, meta in logged}
    assert kinds["prompt"][0] == "Make the parser accept tabs."
    assert "3 passed" in kinds["tool_call"][0]
    assert kinds["tool_call"][1]["command"] == "pytest -q tests/parser"
    assert kinds["tool_call"][1]["tool_use_id"] == "toolu_01"
    assert "No rule to make target" in kinds["error"][0]
    assert kinds["response"][0] == _last_assistant_text_naively(transcript)
    assert all(meta["session_id"] == SESSION for *_, meta in logged)
    assert not _spool(project).exists()


def test_a_real_edit_keeps_its_structured_patch(project, shared_testdata):
    transcript = shared_testdata(*TRANSCRIPTS, "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    edit, result = _first_edit(transcript)
    _hook(
        project,
        "PostToolUse",
        tool_name="Edit",
        tool_input=edit,
        tool_response=result,
    )
    [(kind, _, content, meta)] = _logged(project)
    assert kind == "diff"
    assert meta["files"] == [edit["file_path"]]
    hunk = result["structuredPatch"][0]
    assert f"@@ -{hunk['oldStart']},{hunk['oldLines']}" in content
    assert all(line in content for line in hunk["lines"] if line.startswith(("+", "-")))


def test_a_real_write_that_created_a_file_is_marked_as_a_new_file(project, shared_testdata):
    transcript = shared_testdata(*TRANSCRIPTS, "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    write, result = _first_call(transcript, "Write", lambda r: r.get("type") == "create")
    _hook(project, "PostToolUse", tool_name="Write", tool_input=write, tool_response=result)
    [(kind, _, content, _)] = _logged(project)
    assert kind == "diff"
    assert content.splitlines()[:2] == ["new file", f"--- {write['file_path']}"]
    assert f"+{write['content'].splitlines()[0]}" in content


def test_a_run_with_a_failing_exit_status_is_an_error(project):
    _hook(
        project,
        "PostToolUse",
        tool_name="mcp__capy__capy_execute",
        tool_input={"language": "shell", "code": "false"},
        tool_response={"structuredContent": {"exit_code": 1, "source": "execute:abc123"}},
    )
    [(kind, _, _, meta)] = _logged(project)
    assert kind == "error"
    assert meta["exit_status"] == 1
    assert meta["source_label"] == "execute:abc123"


@pytest.mark.parametrize("platform", ["codex", "gemini-cli", "cursor"])
def test_other_platforms_capture_their_prompts(project, platform):
    native = {
        "codex": "UserPromptSubmit",
        "gemini-cli": "BeforeAgent",
        "cursor": "beforeSubmitPrompt",
    }
    _hook(project, native[platform], platform=platform, prompt=f"hello from {platform}")
    [(kind, _, content, meta)] = _logged(project)
    assert (kind, content, meta["platform"]) == ("prompt", f"hello from {platform}", platform)


def test_secrets_in_a_tool_output_never_reach_the_spool_or_the_log(project):
    found = fresh_secrets()
    key = fake_private_key()
    long_output = log_lines(5000) + planted_text(found) + "\n" + log_lines(5000)
    _hook(
        project,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": f"deploy --token {found['github']}"},
        tool_response={"stdout": planted_text(found), "stderr": key},
    )
    _hook(
        project,
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "cat"},
        tool_response=long_output,
    )
    _hook(project, "UserPromptSubmit", prompt=f"use {found['aws']} and {found['stripe']}")
    spooled = _spool(project).read_text(encoding="utf-8")
    assert raw_in(spooled, found) == []
    assert raw_in(spooled, {"private-key": key}) == []
    assert "[REDACTED:" in spooled
    logged = json.dumps(_logged(project))
    assert raw_in(logged, found) == []
    assert raw_in(logged, {"private-key": key}) == []


@pytest.mark.parametrize("side", ["head", "tail"])
def test_a_key_across_the_cut_is_redacted_whole(project, side):
    """The output bound cuts through a PEM key: what is kept of it must still be masked."""
    from capy.rules import load_rules

    bound = load_rules(project).view("capsules").capture.bounds.tool_output_chars
    key = fake_private_key()
    if side == "head":  # the head's last characters are in the key's body
        output = log_lines(bound // 2 - len(key) // 2) + key + "\n" + log_lines(bound * 3)
    else:  # the tail's first characters are
        output = log_lines(bound * 3) + key + "\n" + log_lines(bound // 2 - len(key) // 2)
    _hook(project, "PostToolUse", tool_name="mcp__other__dump", tool_input={}, tool_response=output)
    [(_, _, content, _)] = _logged(project)
    assert "characters not kept" in content
    assert raw_in(content, {"private-key": key}) == []
    assert not any(line[:16] in content for line in key.splitlines()[1:-1])


def test_capture_off_spools_nothing(project):
    (project / ".capy.toml").write_text("[hooks]\ncapture = false\n", encoding="utf-8")
    _hook(project, "UserPromptSubmit", prompt="not kept")
    assert _spooled(project) == []


def test_session_end_starts_the_drainer(project):
    import time

    _hook(project, "UserPromptSubmit", prompt="kept before the end")
    _hook(project, "SessionEnd", reason="exit")
    deadline = time.monotonic() + 60
    kinds: list[str] = []
    while len(kinds) < 2 and time.monotonic() < deadline:  # the detached drainer's work
        time.sleep(0.2)
        with open_capsules(project_dir=project) as store:
            kinds = [row[0] for row in store.conn.execute("SELECT kind FROM capsules ORDER BY n")]
    assert kinds == ["prompt", "note"]
    assert not _spool(project).exists()


def test_a_hook_s_drainer_begins_only_once_the_hook_has_exited(project):
    """The drainer a hook process starts waits for that process's exit (a pipe only the
    starter holds), so it never competes with the exit the agent waits for."""
    import subprocess
    import sys
    import time

    _hook(project, "UserPromptSubmit", prompt="kept while the starter lives")
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys;from capy.hooks.capture import start_drainer;"
            f"start_drainer({str(project)!r}, 0, after_exit=True);"
            "print('started', flush=True);sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=project,
    )
    try:
        assert starter.stdout.readline() == b"started\n"
        time.sleep(1.5)  # time enough for a drainer that did not wait to take the spool
        assert _spooled(project), "the drainer began before its starter exited"
    finally:
        starter.communicate(b"", timeout=60)  # stdin closes, the starter exits
    deadline = time.monotonic() + 60
    kinds: list[str] = []
    while not kinds and time.monotonic() < deadline:  # the drain, now that the starter is gone
        time.sleep(0.2)
        with open_capsules(project_dir=project) as store:
            kinds = [row[0] for row in store.conn.execute("SELECT kind FROM capsules")]
    assert kinds == ["prompt"]


def _last_assistant_text_naively(transcript: Path) -> str:
    """The last assistant line with text, parsing the whole file (what the tail reader skips)."""
    last = None
    for line in transcript.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            texts = [
                item["text"].strip()
                for item in message.get("content") or []
                if isinstance(item, dict) and item.get("type") == "text" and item["text"].strip()
            ]
            if texts:
                last = "\n\n".join(texts)
    assert last is not None
    return last


def _first_edit(transcript: Path) -> tuple[dict, dict]:
    return _first_call(transcript, "Edit", lambda result: bool(result.get("structuredPatch")))


def _first_call(transcript: Path, tool: str, wanted) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """The first call of `tool` in a real transcript whose structured result is `wanted`."""
    inputs = {}
    for line in transcript.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        for item in message.get("content") or []:
            if isinstance(item, dict) and item.get("type") == "tool_use" and item["name"] == tool:
                inputs[item["id"]] = item["input"]
            if isinstance(item, dict) and item.get("type") == "tool_result":
                result = entry.get("toolUseResult")
                ours = item["tool_use_id"] in inputs and isinstance(result, dict)
                if ours and wanted(result):
                    return inputs[item["tool_use_id"]], result
    raise AssertionError(f"no {tool} call with such a result in the transcript")


def test_the_spool_is_never_readable_by_others(project):
    _hook(project, "UserPromptSubmit", prompt="private")
    assert os.stat(_spool(project)).st_mode & 0o077 == 0
    report = None
    with open_capsules(project_dir=project) as store:
        report = drain_spool_report(store)
    assert report is not None and report.written == 1
