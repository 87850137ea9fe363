"""Redaction of a parsed session: every text field, or only what a transcript renders."""

from __future__ import annotations

from capy.security.redaction import redact
from capy.sessions.claude import parse_claude
from capy.sessions.redaction import redact_session, redact_texts

TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"  # visibly fake, from the secrets pack


def _session(tmp_path, jsonl_writer, make_claude_line):
    path = jsonl_writer(
        tmp_path / "s.jsonl",
        [
            make_claude_line("user", f"push with GITHUB_TOKEN={TOKEN}", cwd="/"),
            make_claude_line(
                "assistant",
                [
                    {"type": "thinking", "thinking": f"the token is {TOKEN}"},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": f"GITHUB_TOKEN={TOKEN} git push"},
                    },
                ],
                cwd="/",
            ),
            make_claude_line(
                "user",
                [{"type": "tool_result", "tool_use_id": "t1", "content": f"used {TOKEN}"}],
                cwd="/",
            ),
        ],
    )
    return path


def test_every_field_is_redacted(tmp_path, jsonl_writer, make_claude_line, shipped_rules):
    pack, secrets = shipped_rules.view("transcripts"), shipped_rules.view("secrets")
    session = parse_claude(_session(tmp_path, jsonl_writer, make_claude_line), pack)
    counts = redact_session(session, secrets)
    assert sum(counts.values()) >= 5
    prompt, reply, result = session.messages
    (call,) = reply.tool_calls
    for text in (prompt.text, reply.thinking, call.input["command"], call.summary, result.text):
        assert TOKEN not in text and "[REDACTED:" in text


def test_indexed_only_leaves_unrendered_fields(
    tmp_path, jsonl_writer, make_claude_line, shipped_rules
):
    pack, secrets = shipped_rules.view("transcripts"), shipped_rules.view("secrets")
    session = parse_claude(_session(tmp_path, jsonl_writer, make_claude_line), pack)
    redact_session(session, secrets, indexed_only=True)
    prompt, reply, result = session.messages
    (call,) = reply.tool_calls
    assert TOKEN not in prompt.text + call.summary + result.text + result.result.summary
    assert TOKEN in reply.thinking  # reasoning is never rendered into a transcript


def test_joined_scan_matches_one_scan_per_text(shipped_rules):
    secrets = shipped_rules.view("secrets")
    texts = ["", f"a {TOKEN}", "nothing here", f"{TOKEN}\n{TOKEN}", "password = hunter2hunter2"]
    cleaned, counts = redact_texts(texts, secrets)
    assert cleaned == [redact(text, secrets=secrets).text for text in texts]
    assert counts["secrets.github-pat"] == 3
