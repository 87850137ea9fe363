"""The Stop hook's reader of a transcript's end, against a whole-file parse of real ones."""

from __future__ import annotations

import json

import pytest

from capy.hooks.transcript_tail import last_assistant_text


def _shape() -> dict:
    from capy.rules import build_ruleset

    transcript = build_ruleset().view("capsules").capture.transcript
    return {
        "message_fields": list(transcript.message_fields),
        "assistant_role": transcript.assistant_role,
        "text_types": list(transcript.text_types),
    }


CLAUDE_SHAPE = _shape()
FILES = [
    "short.jsonl",
    "tool_heavy.jsonl",
    "subagent.jsonl",
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
]


def _naive(lines: list[str]) -> tuple[str, str] | None:
    """The last assistant message with text: its text lines joined, read front to back."""
    found: list[tuple[str, str, str]] = []  # (message id, uuid, text)
    for line in lines:
        entry = json.loads(line)
        message = entry.get("message")
        if not (isinstance(message, dict) and message.get("role") == "assistant"):
            continue
        content = message.get("content")
        texts = (
            [
                item["text"].strip()
                for item in content
                if isinstance(content, list)
                if isinstance(item, dict) and item.get("type") == "text" and item["text"].strip()
            ]
            if isinstance(content, list)
            else []
        )
        if texts:
            found.append((message.get("id"), entry.get("uuid"), "\n\n".join(texts)))
    if not found:
        return None
    last_id = found[-1][0]
    # Only the trailing run of lines of the last message counts.
    run = []
    for item in reversed(found):
        if item[0] != last_id:
            break
        run.insert(0, item)
    return "\n\n".join(text for _, _, text in run), run[-1][1]


@pytest.mark.parametrize("name", FILES)
def test_the_tail_reader_agrees_with_a_whole_parse(shared_testdata, name):
    path = shared_testdata("claude-transcripts", "spotter", name)
    expected = _naive(path.read_text(encoding="utf-8").splitlines())
    assert last_assistant_text(str(path), 1 << 20, CLAUDE_SHAPE) == expected


def test_a_tail_too_small_for_any_message_finds_nothing(shared_testdata, tmp_path):
    path = tmp_path / "t.jsonl"
    line = {"type": "assistant", "message": {"role": "assistant", "id": "m", "content": "hi"}}
    path.write_text(json.dumps(line) + "\n" + ("x" * 5000) + "\n", encoding="utf-8")
    assert last_assistant_text(str(path), 1000, CLAUDE_SHAPE) is None
    assert last_assistant_text(str(path), 1 << 20, CLAUDE_SHAPE) == ("hi", None)


def test_a_codex_rollout_line_is_read(tmp_path):
    path = tmp_path / "rollout.jsonl"
    line = {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done: tests pass."}],
        },
    }
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert last_assistant_text(str(path), 1 << 20, CLAUDE_SHAPE) == ("Done: tests pass.", None)
