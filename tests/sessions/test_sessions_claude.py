"""Claude Code transcripts parse into the session model, checked against the real files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from capy.sessions.claude import parse_claude

LONG = "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def _records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _sessions(root: Path) -> list[Path]:
    return [path for path in sorted(root.rglob("*.jsonl")) if "subagents" not in path.parts]


def _independent_counts(path: Path) -> dict[str, int]:
    """Counted with plain json: what the parser must agree with."""
    assistant_ids, uses, results = set(), 0, 0
    for record in _records(path):
        if record.get("isMeta") or record.get("isCompactSummary"):
            continue
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if record.get("type") == "assistant":
            assistant_ids.add(message.get("id"))
            uses += sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
        if record.get("type") == "user":
            kinds = [b.get("type") for b in blocks if isinstance(b, dict)]
            results += kinds.count("tool_result")
    return {"assistant": len(assistant_ids), "tool_calls": uses, "tool_results": results}


def test_every_shared_transcript_parses_and_keeps_every_line(claude_transcripts, transcripts_pack):
    files = _sessions(claude_transcripts)
    assert len(files) >= 8
    for path in files:
        session = parse_claude(path, transcripts_pack)
        raw = path.read_text(encoding="utf-8").splitlines()
        assert session.raw_lines == raw, path.name
        assert session.messages, path.name
        assert session.report.lines == len(raw)
        not_objects = len(raw) - len(_records(path)) - sum(1 for line in raw if not line.strip())
        assert session.report.malformed_count == not_objects, path.name


def test_messages_and_tool_pairs_match_independent_counts(claude_transcripts, transcripts_pack):
    for name in ("spotter/short.jsonl", "spotter/subagent.jsonl", LONG):
        path = claude_transcripts / name
        session = parse_claude(path, transcripts_pack, sidecars=False)
        expected = _independent_counts(path)
        replies = [m for m in session.messages if m.role == "assistant"]
        assert len(replies) == expected["assistant"], name
        assert len(session.tool_calls) == expected["tool_calls"], name
        assert len(session.tool_results) == expected["tool_results"], name
        # Every result is paired with its call and carries the call's summary.
        assert all(result.tool and result.summary for result in session.tool_results), name


def test_long_session_matches_the_documented_figures(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / LONG, transcripts_pack)
    tools = Counter(call.tool for call in session.tool_calls)
    assert tools == Counter(
        Bash=120, Edit=67, Read=37, Write=6, Glob=5, WebFetch=4, Grep=1, Task=1, Skill=1
    )
    shapes = Counter(result.shape for result in session.tool_results)
    assert shapes["patch"] == 71  # 65 Edit + 6 Write "create" structuredPatch records
    assert sum(result.is_error for result in session.tool_results) == 12
    edits = [r for r in session.tool_results if r.tool == "Edit" and r.shape == "patch"]
    assert all(r.diff.startswith("@@ ") for r in edits)
    writes = [r for r in session.tool_results if r.tool == "Write" and r.shape == "patch"]
    # A created file opens with git's marker, so "which new file holds X" finds the patch.
    assert writes and all(r.diff.startswith("new file\n+") for r in writes)


def test_content_blocks_of_one_message_id_merge_in_line_order(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / "spotter/short.jsonl", transcripts_pack)
    (reply,) = [m for m in session.messages if m.role == "assistant"]
    assert reply.message_id == "msg_01MKH1ccEGrZGNPvu8pYiiQa"
    assert len(reply.line_numbers) == 5
    assert reply.line_numbers == sorted(reply.line_numbers)
    assert [call.tool for call in reply.tool_calls] == ["Bash", "Glob"]
    assert reply.thinking  # kept in the model, left out of the index
    assert reply.text.startswith("Let me check the project structure")


def test_noise_is_stripped_from_every_text(claude_transcripts, transcripts_pack):
    raw_reminders = 0
    for path in _sessions(claude_transcripts):
        raw_reminders += path.read_text(encoding="utf-8").count("<system-reminder>")
        for part in parse_claude(path, transcripts_pack).all_sessions():
            for message in part.messages:
                if message.kind in ("meta", "compact_summary"):
                    continue  # harness text kept verbatim for the archive, never indexed
                for marker in ("<system-reminder>", "<local-command-", "<command-message>"):
                    assert marker not in message.text, (path.name, marker)
    assert raw_reminders > 0  # the data really had some to strip


def test_task_result_loses_its_trailers(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / LONG, transcripts_pack)
    (task,) = [r for r in session.tool_results if r.tool == "Task"]
    assert task.shape == "task"
    assert "agentId:" not in task.text and "<usage>" not in task.text
    assert task.text.strip()


def test_compaction_boundary_and_summary(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / LONG, transcripts_pack)
    (compaction,) = session.compactions
    assert compaction.trigger == "manual"
    assert compaction.line_number == 1481
    assert compaction.summary.startswith("This session is being continued")
    kinds = Counter(message.kind for message in session.messages)
    assert kinds["compact_summary"] == 1


def test_subagent_sidecars_are_attached(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / LONG, transcripts_pack)
    assert [sidecar.agent_id for sidecar in session.sidecars] == ["aac57f5", "acompact-946d2b"]
    research = session.sidecars[0]
    assert Counter(call.tool for call in research.tool_calls) == Counter(WebSearch=6, WebFetch=6)
    assert research.prompts[0].text.startswith("Search hex.pm")


def test_malformed_and_unknown_lines_are_counted_not_fatal(
    tmp_path, transcripts_pack, jsonl_writer, make_claude_line
):
    cwd = str(tmp_path)
    path = jsonl_writer(
        tmp_path / "broken.jsonl",
        [
            make_claude_line("user", "first prompt", cwd=cwd),
            '{"type": "assistant", "message": {"id": "m", "content": [{"type": "te',
            "not json at all",
            '["a", "list"]',
            {"type": "brand-new-line-type", "payload": 1},
            make_claude_line("assistant", [{"type": "text", "text": "an answer"}], cwd=cwd),
        ],
    )
    session = parse_claude(path, transcripts_pack)
    assert session.report.malformed == [2, 3, 4]
    assert session.report.unknown == Counter({"brand-new-line-type": 1})
    assert [m.text for m in session.messages] == ["first prompt", "an answer"]
    assert len(session.raw_lines) == 6  # the unknown line is kept for the archive


def test_truncated_read_keeps_whole_lines(
    tmp_path, transcripts_pack, jsonl_writer, make_claude_line
):
    lines = [make_claude_line("user", f"prompt {n} " + "x" * 200, cwd="/") for n in range(50)]
    path = jsonl_writer(tmp_path / "big.jsonl", lines)
    session = parse_claude(path, transcripts_pack, max_bytes=2000)
    assert session.report.truncated
    assert session.report.malformed_count == 0
    assert 0 < len(session.messages) < 50
