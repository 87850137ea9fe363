"""A session as a Human/Assistant transcript in turn-pair chunks, ready for the knowledge base.

A turn pair is a user prompt and everything up to the next prompt: replies, tool calls and their
results as the transcripts pack decides (promote: key event with result; enrich: the call's
summary and a capped result; skip: nothing). Neighbouring pairs are grouped into one `##` section
up to the pack's chunking limits; the knowledge base's markdown chunker then cuts one chunk per
section (a section larger than a chunk is split under the same title).
"""

from __future__ import annotations

from dataclasses import dataclass

from capy.rules.views.transcripts import Action, ResultMode, TranscriptsPack
from capy.sessions.markdown import fenced, inert_markdown
from capy.sessions.model import Message, Session, ToolCall, ToolResult

# Marks where a capped result lost its middle, so a reader knows text is missing.
_OMITTED = "\n[… {count:,} characters omitted …]\n"


@dataclass
class Turn:
    prompt: Message | None  # None for what precedes the first prompt
    messages: list[Message]


@dataclass(frozen=True)
class Transcript:
    text: str  # markdown, one `##` section per turn-pair chunk
    sections: int
    user_turns: int  # real prompts, sidecars' included
    content_chars: int  # prompt, reply and call-summary characters: the pack's sweep threshold


def turns_of(session: Session) -> list[Turn]:
    """Split a session's messages at each real prompt."""
    turns: list[Turn] = []
    current = Turn(None, [])
    for message in session.messages:
        if message.is_prompt:
            if current.prompt is not None or current.messages:
                turns.append(current)
            current = Turn(message, [])
        else:
            current.messages.append(message)
    if current.prompt is not None or current.messages:
        turns.append(current)
    return turns


def build_transcript(session: Session, pack: TranscriptsPack) -> Transcript:
    """Render the session and the sidecars the pack includes as one markdown document."""
    sections: list[str] = []
    user_turns = content_chars = 0
    parts = [session] + [
        sidecar for sidecar in session.sidecars if pack.claude.indexes_sidecar(sidecar.path.name)
    ]
    for part in parts:
        renderer = _Renderer(part, pack)
        rendered = [renderer.turn(turn) for turn in turns_of(part)]
        rendered = [item for item in rendered if item.body]
        user_turns += len(part.prompts)
        content_chars += renderer.content_chars
        prefix = f"Subagent {part.agent_id} " if part is not session else ""
        sections.extend(_group(rendered, pack, prefix))
    text = "\n\n".join([_preamble(session), *sections]) + "\n"
    return Transcript(text, len(sections), user_turns, content_chars)


@dataclass(frozen=True)
class _RenderedTurn:
    number: int
    date: str  # YYYY-MM-DD of the prompt, "" when unknown
    topic: str  # the prompt's first words
    body: str


class _Renderer:
    def __init__(self, session: Session, pack: TranscriptsPack) -> None:
        self.pack = pack
        self.results = {
            message.result.call_id: message.result
            for message in session.messages
            if message.result is not None and message.result.call_id
        }
        self.called = {call.call_id for call in session.tool_calls}
        self.content_chars = 0
        self.number = 0

    def turn(self, turn: Turn) -> _RenderedTurn:
        blocks: list[str] = []
        title = ""
        if turn.prompt is not None:
            self.number += 1
            title = " ".join(turn.prompt.text.split())[: self.pack.chunking.title_chars]
            blocks.append(self._said("Human", turn.prompt.text))
        for message in turn.messages:
            blocks.extend(self._message(message))
        first = turn.prompt or (turn.messages[0] if turn.messages else None)
        date = (first.timestamp or "")[:10] if first else ""
        return _RenderedTurn(self.number, date, title, "\n\n".join(blocks))

    def _said(self, who: str, text: str) -> str:
        self.content_chars += len(text)
        return f"{who}: {inert_markdown(text)}"

    def _message(self, message: Message) -> list[str]:
        if message.kind == "reply":
            blocks = [self._said("Assistant", message.text)] if message.text else []
            for call in message.tool_calls:
                blocks.extend(self._call(call, self.results.get(call.call_id)))
            return blocks
        if message.kind == "command":
            return [self._said("Human", message.text)]
        if message.result is not None and message.result.call_id not in self.called:
            return self._call(None, message.result)  # a result whose call was never written
        return []  # results render with their calls; meta and compaction summaries stay out

    def _call(self, call: ToolCall | None, result: ToolResult | None) -> list[str]:
        tool = call.tool if call else (result.tool if result else "")
        is_error = bool(result and result.is_error)
        action = self.pack.action_for(tool, is_error=is_error)
        if action == Action.SKIP:
            return []
        summary = (call.summary if call else result.summary if result else "") or tool or "?"
        label = "Key event" if action == Action.PROMOTE else "Tool"
        self.content_chars += len(summary)
        blocks = [f"{label}: {inert_markdown(summary)}"]
        body = self._result_body(tool, result) if result else ""
        if body:
            blocks.append(("Error:\n" if is_error else "Result:\n") + fenced(body))
        return blocks

    def _result_body(self, tool: str, result: ToolResult) -> str:
        chunking = self.pack.chunking
        if result.is_error:
            return _cap(result.text, chunking.error_result_max_chars)
        mode = self.pack.result_mode(tool)
        if mode == ResultMode.EXCLUDED:
            return ""
        if mode == ResultMode.DIFF and result.diff:
            return _cap_lines(result.diff, chunking.diff_max_lines)
        return _cap(result.text, chunking.result_max_chars)


def _group(turns: list[_RenderedTurn], pack: TranscriptsPack, prefix: str) -> list[str]:
    """Neighbouring turn pairs in one section, up to the pack's turn and byte limits."""
    limit, most = pack.chunking.max_chunk_bytes, pack.chunking.max_turns_per_chunk
    sections: list[str] = []
    group: list[_RenderedTurn] = []
    size = 0
    for turn in turns:
        turn_size = len(turn.body.encode("utf-8"))
        if group and (len(group) >= most or size + turn_size > limit):
            sections.append(_section(group, prefix))
            group, size = [], 0
        group.append(turn)
        size += turn_size
    if group:
        sections.append(_section(group, prefix))
    return sections


def _section(group: list[_RenderedTurn], prefix: str) -> str:
    first, last = group[0], group[-1]
    span = f"Turn {first.number}" if first is last else f"Turns {first.number}-{last.number}"
    title = (
        span
        + (f" ({first.date})" if first.date else "")
        + (f": {first.topic}" if first.topic else "")
    )
    body = "\n\n".join(turn.body for turn in group)
    return f"## {prefix}{title}\n\n{body}"


def _preamble(session: Session) -> str:
    facts = [f"Session {session.session_id}", session.platform]
    facts += [value for value in (session.cwd, session.git_branch, session.model) if value]
    span = " to ".join(dict.fromkeys(t for t in (session.started_at, session.ended_at) if t))
    if span:
        facts.append(span)
    lines = [" · ".join(facts)]
    if session.title:
        lines.append(f"Title: {inert_markdown(session.title)}")
    return "\n".join(lines)


def _cap(text: str, limit: int) -> str:
    """Head and tail of `text` within `limit` characters: errors and summaries sit at the ends."""
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    head = limit * 2 // 3
    tail = limit - head
    return text[:head] + _OMITTED.format(count=len(text) - limit) + text[-tail:]


def _cap_lines(text: str, limit: int) -> str:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join(lines[:limit]) + _OMITTED.format(count=sum(map(len, lines[limit:])))
