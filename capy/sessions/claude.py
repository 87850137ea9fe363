"""Claude Code JSONL transcripts (`~/.claude/projects/<project>/<session>.jsonl`) to a Session.

Claude Code writes one line per content block: an assistant message with text, thinking and two
tool calls spans several lines sharing one `message.id`, and each tool result arrives as its own
user line. Which line types are read, and which flags make a line harness noise, come from the
transcripts pack; the parser only knows the format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capy.rules.views.transcripts import TranscriptsPack
from capy.sessions.model import Compaction, Message, Session, ToolCall, ToolResult
from capy.sessions.reader import MessageLog, json_records, read_raw_lines, text_field
from capy.sessions.results import block_text, patch_diff, result_body, result_shape

PLATFORM = "claude-code"
SIDECAR_DIR = "subagents"  # <session>/subagents/agent-*.jsonl, written by Claude Code 2.1+


def parse_claude(
    path: Path, pack: TranscriptsPack, *, max_bytes: int | None = None, sidecars: bool = True
) -> Session:
    """Parse a Claude Code transcript and, unless told not to, its subagent sidecars."""
    raw_lines, truncated = read_raw_lines(path, max_bytes)
    session = Session(platform=PLATFORM, session_id=path.stem, path=path, raw_lines=raw_lines)
    session.report.truncated = truncated
    builder = _Builder(session, pack)
    for number, record in json_records(raw_lines, session.report):
        builder.add(number, record)
    if sidecars:
        session.sidecars = [
            parse_claude(sidecar, pack, max_bytes=max_bytes, sidecars=False)
            for sidecar in sidecar_files(path)
        ]
    return session


def sidecar_files(path: Path) -> list[Path]:
    folder = path.parent / path.stem / SIDECAR_DIR
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


class _Builder(MessageLog):
    RECORD_ID_FIELD = "uuid"

    def __init__(self, session: Session, pack: TranscriptsPack) -> None:
        super().__init__(session)
        self.pack = pack
        self.assistant_by_id: dict[str, Message] = {}
        self.calls: dict[str, ToolCall] = {}

    def add(self, number: int, record: dict[str, Any]) -> None:
        self._take_metadata(record)
        kind = str(record.get("type"))
        lines = self.pack.claude
        if kind == "system" and record.get("subtype") == "compact_boundary":
            self._compaction(number, record)
        if record.get("isCompactSummary") is True:
            self._compact_summary(number, record)
            return
        handling = lines.handling(record)
        if handling == "title":
            self.session.title = self.session.title or text_field(record.get("summary"))
        elif handling == "read":
            self._read(number, record)
        elif kind in lines.line_types and lines.line_types[kind] == "read":
            self._meta(number, record)  # a read type whose flags (isMeta...) say harness text
        else:
            self.session.report.skipped[kind] += 1
            if kind not in lines.line_types:
                self.session.report.unknown[kind] += 1

    def _take_metadata(self, record: dict[str, Any]) -> None:
        # The file name is the session id Claude Code resumes by; lines copied into a resumed
        # session keep the id of the one they came from, so `sessionId` is not used.
        session = self.session
        session.cwd = session.cwd or text_field(record.get("cwd")) or None
        session.git_branch = session.git_branch or text_field(record.get("gitBranch")) or None
        session.version = session.version or text_field(record.get("version")) or None
        session.agent_id = session.agent_id or text_field(record.get("agentId")) or None

    def _compaction(self, number: int, record: dict[str, Any]) -> None:
        metadata = record.get("compactMetadata")
        trigger = metadata.get("trigger") if isinstance(metadata, dict) else None
        self.session.compactions.append(
            Compaction(number, text_field(record.get("timestamp")) or None, trigger)
        )

    def _compact_summary(self, number: int, record: dict[str, Any]) -> None:
        text = block_text(_message(record).get("content"))
        compactions = self.session.compactions
        if compactions and not compactions[-1].summary:
            last = compactions[-1]
            compactions[-1] = Compaction(last.line_number, last.timestamp, last.trigger, text)
        self._append("system", "compact_summary", text, number, record)

    def _meta(self, number: int, record: dict[str, Any]) -> None:
        text = block_text(_message(record).get("content"))
        if text.strip():
            self._append("system", "meta", text, number, record)

    def _read(self, number: int, record: dict[str, Any]) -> None:
        message = _message(record)
        if record.get("type") == "assistant" or message.get("role") == "assistant":
            self._assistant(number, record, message)
        else:
            self._user(number, record, message)

    def _assistant(self, number: int, record: dict[str, Any], message: dict[str, Any]) -> None:
        message_id = text_field(message.get("id")) or text_field(record.get("uuid"))
        current = self.assistant_by_id.get(message_id) if message_id else None
        if current is None:
            current = self._append("assistant", "reply", "", number, record, message_id)
            if message_id:
                self.assistant_by_id[message_id] = current
        else:
            current.line_numbers.append(number)
        model = text_field(message.get("model"))
        if model and not model.startswith("<"):  # "<synthetic>" marks harness-made replies
            self.session.model = self.session.model or model
        content = message.get("content")
        for block in content if isinstance(content, list) else [content]:
            self._assistant_block(current, block)

    def _assistant_block(self, current: Message, block: Any) -> None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "tool_use":
            call = self._tool_call(block)
            current.tool_calls.append(call)
        elif kind == "thinking":
            current.thinking = _join(current.thinking, text_field(block.get("thinking")))
        else:
            text = self.pack.strip_noise(block_text(block), "assistant")
            current.text = _join(current.text, text)

    def _tool_call(self, block: dict[str, Any]) -> ToolCall:
        tool = text_field(block.get("name")) or "unknown"
        tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
        call = ToolCall(
            call_id=text_field(block.get("id")),
            tool=tool,
            input=tool_input,
            summary=self.pack.summarize(tool, tool_input),
        )
        self.calls[call.call_id] = call
        return call

    def _user(self, number: int, record: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        record_result = record.get("toolUseResult")
        for block in results:
            # The structured record belongs to the line; with one result block it is that one's.
            structured = record_result if len(results) == 1 else None
            self._tool_result(number, record, block, structured)
        text = self.pack.strip_noise(block_text(others), "user")
        if text:
            kind = "command" if text.startswith("/") and len(text.split()) == 1 else "prompt"
            self._append("user", kind, text, number, record)

    def _tool_result(
        self, number: int, record: dict[str, Any], block: dict[str, Any], structured: Any
    ) -> None:
        call_id = text_field(block.get("tool_use_id"))
        call = self.calls.get(call_id)
        is_error = block.get("is_error") is True
        body = result_body(block.get("content"), structured)
        result = ToolResult(
            call_id=call_id,
            tool=call.tool if call else "",
            summary=call.summary if call else "",
            text=self.pack.strip_noise(body, "tool_result"),
            is_error=is_error,
            shape=result_shape(structured, is_error=is_error),
            diff=patch_diff(structured),
        )
        message = self._append("tool", "tool_result", result.text, number, record, call_id)
        message.result = result


def _message(record: dict[str, Any]) -> dict[str, Any]:
    message = record.get("message")
    return message if isinstance(message, dict) else {}


def _join(first: str, second: str) -> str:
    if not second:
        return first
    return f"{first}\n\n{second}" if first else second
