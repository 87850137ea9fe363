"""One model for every agent's transcripts: a session is a list of messages, one per row.

Claude Code and Codex files both parse into these types, so the knowledge-base sweep and the
vault read one shape. A message keeps the line numbers it came from; the session keeps every raw
line, so nothing the parser did not understand is lost.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Role = Literal["user", "assistant", "tool", "system"]
# prompt: something a person typed; command: a bare slash-command echo (/model, /mcp);
# reply: the agent's text; tool_result: a tool's answer; compact_summary: the summary written
# at a compaction; meta: harness-injected text (skill bodies, caveats, developer instructions).
MessageKind = Literal["prompt", "command", "reply", "tool_result", "compact_summary", "meta"]


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    tool: str  # canonical name (Codex aliases mapped through the transcripts pack)
    input: dict
    summary: str  # the pack's one-line summary of the call


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    tool: str  # the paired call's tool; "" when the call was never seen
    summary: str  # the paired call's summary, so a result row says what it answers
    text: str  # the body, noise stripped
    is_error: bool
    shape: str  # bash, patch, read, search, fetch, task, error, text
    diff: str = ""  # unified diff lines for Edit/Write results that carry a structured patch


@dataclass
class Message:
    role: Role
    kind: MessageKind
    text: str
    timestamp: str | None = None
    message_id: str | None = None  # Claude `message.id` or line uuid; Codex call id
    line_numbers: list[int] = field(default_factory=list)  # 1-based, in the file it came from
    tool_calls: list[ToolCall] = field(default_factory=list)
    result: ToolResult | None = None
    thinking: str = ""  # kept for the archive; the index leaves reasoning out

    @property
    def is_prompt(self) -> bool:
        return self.kind == "prompt"


@dataclass(frozen=True)
class Compaction:
    """A point where the agent replaced its context with a summary."""

    line_number: int
    timestamp: str | None
    trigger: str | None
    summary: str = ""


@dataclass
class ParseReport:
    lines: int = 0
    malformed: list[int] = field(default_factory=list)  # line numbers that were not JSON objects
    skipped: Counter[str] = field(default_factory=Counter)  # line type -> lines not read
    unknown: Counter[str] = field(default_factory=Counter)  # line types the pack does not know
    truncated: bool = False  # the file was larger than the sweep's max_file_bytes

    @property
    def malformed_count(self) -> int:
        return len(self.malformed)


@dataclass
class Session:
    platform: str  # the platforms pack key: claude-code, codex
    session_id: str
    path: Path
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    model: str | None = None
    title: str | None = None
    agent_id: str | None = None  # set on subagent sidecars
    messages: list[Message] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    sidecars: list[Session] = field(default_factory=list)
    raw_lines: list[str] = field(default_factory=list)  # every line as read, unknown ones too
    report: ParseReport = field(default_factory=ParseReport)

    @property
    def started_at(self) -> str | None:
        return next((m.timestamp for m in self.messages if m.timestamp), None)

    @property
    def ended_at(self) -> str | None:
        return next((m.timestamp for m in reversed(self.messages) if m.timestamp), None)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for message in self.messages for call in message.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [message.result for message in self.messages if message.result is not None]

    @property
    def prompts(self) -> list[Message]:
        return [message for message in self.messages if message.is_prompt]

    def all_sessions(self) -> list[Session]:
        """This session and its sidecars, parent first."""
        return [self, *self.sidecars]
