"""Codex rollout files parse into the same model as Claude Code transcripts."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from capy.sessions.codex import parse_codex
from capy.sessions.discovery import CODEX_FORMAT, sniff_format
from capy.sessions.transcript import build_transcript

TS = "2026-01-05T10:00:00.000Z"


def _line(kind: str, payload: dict) -> dict:
    return {"timestamp": TS, "type": kind, "payload": payload}


def _item(payload: dict) -> dict:
    return _line("response_item", payload)


@pytest.fixture
def rollout(tmp_path, jsonl_writer):
    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-old = 1\n+new = 2\n*** End Patch"
    records = [
        _line(
            "session_meta",
            {
                "id": "0199-codex-session",
                "cwd": str(tmp_path),
                "cli_version": "0.46.0",
                "git": {"branch": "main"},
            },
        ),
        _line("turn_context", {"cwd": str(tmp_path), "model": "gpt-5-codex"}),
        _item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>",
                    }
                ],
            }
        ),
        _item({"type": "message", "role": "developer", "content": "sandbox rules"}),
        _item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix the failing test in app.py"}],
            }
        ),
        _item({"type": "reasoning", "encrypted_content": "gAAAA..."}),
        _item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
                "call_id": "call_1",
            }
        ),
        _item(
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": json.dumps(
                    {"output": "FAILED test_app.py::test_new", "metadata": {"exit_code": 1}}
                ),
            }
        ),
        _line("event_msg", {"type": "agent_message", "message": "duplicate of a response"}),
        _item({"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "c2"}),
        _item({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success."}),
        _item(
            {
                "type": "function_call",
                "name": "update_plan",
                "arguments": json.dumps({"plan": [{"step": "fix app", "status": "completed"}]}),
                "call_id": "call_3",
            }
        ),
        _item({"type": "function_call_output", "call_id": "call_3", "output": "Plan updated"}),
        _item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Fixed: new = 2 makes it pass."}],
            }
        ),
        "{truncated json",
        _line("future_line_type", {"x": 1}),
    ]
    return jsonl_writer(tmp_path / "rollout-2026-01-05T10-00-00-0199.jsonl", records)


def test_rollout_parses_into_the_model(rollout, transcripts_pack):
    session = parse_codex(rollout, transcripts_pack)
    assert session.session_id == "0199-codex-session"
    assert session.cwd == str(rollout.parent)
    assert (session.model, session.git_branch, session.version) == ("gpt-5-codex", "main", "0.46.0")
    assert [m.text for m in session.prompts] == ["fix the failing test in app.py"]
    assert [c.tool for c in session.tool_calls] == ["Bash", "Edit", "TodoWrite"]
    bash, edit, plan = session.tool_calls
    assert bash.summary == "$ pytest -q"
    assert edit.summary == "Edit src/app.py"
    assert plan.summary == "Todos: fix app"
    results = {r.call_id: r for r in session.tool_results}
    assert results["call_1"].is_error and results["call_1"].text == "FAILED test_app.py::test_new"
    assert results["c2"].summary == "Edit src/app.py" and "+new = 2" in results["c2"].diff
    assert session.report.malformed_count == 1
    assert session.report.unknown == Counter({"future_line_type": 1})
    assert session.report.skipped["event_msg"] == 1
    assert len(session.raw_lines) == 16


def test_rollout_noise_stays_out_and_format_is_sniffed(rollout, transcripts_pack):
    session = parse_codex(rollout, transcripts_pack)
    texts = " ".join(message.text for message in session.messages if message.role != "system")
    assert "environment_context" not in texts and "sandbox rules" not in texts
    transcript = build_transcript(session, transcripts_pack)
    assert "Human: fix the failing test in app.py" in transcript.text
    assert "Key event: $ pytest -q" in transcript.text  # a failing command is promoted
    assert "FAILED test_app.py::test_new" in transcript.text
    assert "Assistant: Fixed: new = 2 makes it pass." in transcript.text
    assert sniff_format(rollout, transcripts_pack) == CODEX_FORMAT


def test_plain_text_output_with_exit_code_line(tmp_path, transcripts_pack, jsonl_writer):
    path = jsonl_writer(
        tmp_path / "rollout-x.jsonl",
        [
            _item(
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": "make build"}),
                    "call_id": "a",
                }
            ),
            _item(
                {
                    "type": "function_call_output",
                    "call_id": "a",
                    "output": "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno rule",
                }
            ),
        ],
    )
    session = parse_codex(path, transcripts_pack)
    (result,) = session.tool_results
    assert result.is_error and result.summary == "$ make build"
