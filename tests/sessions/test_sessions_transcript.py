"""Sessions render as Human/Assistant transcripts in turn-pair sections, as the pack says."""

from __future__ import annotations

import re

from capy.chunking import chunk_text
from capy.sessions.claude import parse_claude
from capy.sessions.markdown import fenced, inert_markdown
from capy.sessions.transcript import build_transcript, turns_of

LONG = "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def test_short_session_transcript(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / "spotter/short.jsonl", transcripts_pack)
    transcript = build_transcript(session, transcripts_pack)
    # The pack's threshold comment measured this session at 190 characters of real content.
    assert (transcript.user_turns, transcript.content_chars) == (1, 190)
    text = transcript.text
    assert "## Turn 1 (2026-02-10): mix phx.server doesnt seem to start" in text
    assert "Human: mix phx.server doesnt seem to start" in text
    assert "Key event: $ mix phx.server 2>&1 | head -80" in text  # failed Bash: on_error promote
    assert "Tool: Glob mix.exs in /home/marco/projects/spotter" in text
    assert "/model" not in text and "Kept model" not in text  # local-command lines skipped


def test_long_session_follows_tool_actions(claude_transcripts, transcripts_pack):
    session = parse_claude(claude_transcripts / LONG, transcripts_pack)
    text = build_transcript(session, transcripts_pack).text
    reads = [r for r in session.tool_results if r.tool == "Read" and not r.is_error]
    # Read bodies are file contents: the call summary is indexed, the body never.
    assert reads and all(r.text[:200] not in text for r in reads if len(r.text) > 200)
    assert text.count("Tool: Read ") == sum(1 for c in session.tool_calls if c.tool == "Read")
    # Edits are key events with their diff, capped by the pack.
    assert text.count("Key event: Edit ") == sum(1 for c in session.tool_calls if c.tool == "Edit")
    assert "Subagent aac57f5 Turn 1" in text  # sidecar included
    assert "acompact" not in text  # the compaction sidecar is on the pack's skip list
    assert "This session is being continued" not in text  # compaction summary restates turns
    assert "<system-reminder>" not in text


def test_sections_are_turn_pairs_within_the_pack_limits(
    claude_transcripts, transcripts_pack, shipped_rules
):
    session = parse_claude(claude_transcripts / "spotter/tool_heavy.jsonl", transcripts_pack)
    turns = turns_of(session)
    assert [t.prompt.text for t in turns if t.prompt] == [m.text for m in session.prompts]
    transcript = build_transcript(session, transcripts_pack)
    headings = re.findall(r"^## Turns? .*$", transcript.text, flags=re.MULTILINE)
    assert len(headings) == transcript.sections
    # Headings inside results (a fetched page's "## Suggested Solutions") sit in fences, so the
    # knowledge base's own chunker cuts at turn sections only.
    chunks = chunk_text(
        transcript.text, content_type="markdown", label="t", rules=shipped_rules.view("chunking")
    )
    titles = {chunk.title for chunk in chunks[1:]}  # chunks[0] is the session's preamble
    assert titles == {heading.removeprefix("## ") for heading in headings}


def test_text_cannot_change_the_section_structure():
    text = "intro\n## Not a heading\n```python\n# a comment\n```\n```\nunclosed"
    safe = inert_markdown(text)
    assert "\\## Not a heading" in safe
    assert "# a comment" in safe and "\\# a comment" not in safe  # code stays code
    assert safe.endswith("unclosed\n```")  # the open fence is closed
    assert fenced("has ``` inside").startswith("````\n")


def test_skip_and_error_actions(tmp_path, transcripts_pack, jsonl_writer, make_claude_line):
    def use(call_id, name, tool_input):
        return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}

    def result(call_id, text, error=False):
        return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}

    path = jsonl_writer(
        tmp_path / "s.jsonl",
        [
            make_claude_line("user", "run the suite through capy", cwd="/"),
            make_claude_line(
                "assistant",
                [
                    use("c1", "mcp__capy__capy_execute", {"code": "pytest"}),
                    use("c2", "Read", {"file_path": "/src/missing.py"}),
                    use("c3", "Read", {"file_path": "/src/app.py"}),
                ],
                cwd="/",
            ),
            make_claude_line("user", [result("c1", "CAPY-OWN-OUTPUT")], cwd="/", uuid="r1"),
            make_claude_line(
                "user", [result("c2", "File does not exist.", True)], cwd="/", uuid="r2"
            ),
            make_claude_line("user", [result("c3", "FILE-BODY-LINE")], cwd="/", uuid="r3"),
            make_claude_line("user", [result("c9", "ORPHAN-RESULT")], cwd="/", uuid="r4"),
        ],
    )
    text = build_transcript(parse_claude(path, transcripts_pack), transcripts_pack).text
    assert "capy_execute" not in text and "CAPY-OWN-OUTPUT" not in text  # skip: already indexed
    assert "Tool: Read /src/missing.py" in text and "File does not exist." in text  # errors show
    assert "Tool: Read /src/app.py" in text and "FILE-BODY-LINE" not in text  # excluded body
    assert "ORPHAN-RESULT" in text  # a result whose call was never written still counts
