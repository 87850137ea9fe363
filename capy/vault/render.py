"""`capy vault show`: an archived session read back from its verbatim blob and rendered as text,
markdown or JSON, and the pieces the TUI builds its session view from.

The blob is the verbatim file, secrets and all: a loaded session is redacted (the secrets pack,
through `capy.sessions.redaction`, which masks with `capy.security.redaction`) before anything
of it is shown. Tool results and harness text are "folds": one summary line (tool, call summary,
size, error flag) unless results are asked for; an Edit/Write result's body is its unified diff.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from capy.sessions.model import Message, Session, ToolCall
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.rules.views.transcripts import TranscriptsPack
    from capy.vault import Vault

FORMATS = ("text", "markdown", "json")
# Message kinds whose text is folded like a tool result: harness text and compaction summaries
# repeat what the session already says.
_FOLDED_KINDS = frozenset({"meta", "compact_summary"})
_FOLD_LABELS = {"meta": "harness text", "compact_summary": "compaction summary"}


@dataclass(frozen=True)
class LoadedSession:
    label: str  # <platform>:<session id>
    title: str | None  # as archived: the agent's title or the first prompt's first words
    session: Session  # redacted; sidecars included
    indexed: list[Message]  # the messages with a search row, in row order (a hit's ordinal)

    def message_for_row(self, ordinal: int) -> Message | None:
        return self.indexed[ordinal] if 0 <= ordinal < len(self.indexed) else None


@dataclass(frozen=True)
class Fold:
    """What a folded part of a message shows: one line, and its body when unfolded."""

    line: str
    body: str
    is_diff: bool = False
    is_error: bool = False


def load_session(vault: Vault, wanted: str, rules: RuleSet | None = None) -> LoadedSession:
    """The archived session named by an id, an id prefix or `<platform>:<id>`, parsed from its
    stored files and redacted. Raises `UnknownSessionError` or `CorruptBlobError`."""
    from capy.rules import load_rules
    from capy.sessions.redaction import redact_session, redact_texts
    from capy.vault.archived import parse_archived
    from capy.vault.restore import find_session

    rules = rules or load_rules()
    session_rowid, label, source_path = find_session(vault, wanted)
    (title,) = vault.conn.execute(
        "SELECT title FROM sessions WHERE id = ?", (session_rowid,)
    ).fetchone()
    session = parse_archived(vault.conn, session_rowid, rules)
    session.path = Path(source_path)
    secrets = rules.view("secrets")
    redact_session(session, secrets)
    # What the header shows, beyond the texts `redact_session` cleans.
    cwd, branch, title = redact_texts(
        [session.cwd or "", session.git_branch or "", title or ""], secrets
    )[0]
    session.cwd, session.git_branch = cwd or None, branch or None
    indexed = indexed_messages(session, rules.view("transcripts"))
    return LoadedSession(label, title or None, session, indexed)


def indexed_messages(session: Session, pack: TranscriptsPack) -> list[Message]:
    """The messages `capy.vault.messages.message_rows` makes a row of, in the same order."""
    from capy.vault.messages import message_rows

    parts = [session] + [s for s in session.sidecars if pack.claude.indexes_sidecar(s.path.name)]
    return [
        message
        for part in parts
        for message in part.messages
        if message_rows(_alone(part, message), pack)
    ]


def _alone(part: Session, message: Message) -> Session:
    return Session(part.platform, part.session_id, part.path, messages=[message])


def session_parts(session: Session) -> list[tuple[str, list[Message]]]:
    """(heading, messages shown): the session first (no heading), then each subagent sidecar.
    A message with nothing to show (an assistant turn that only reasoned) is left out."""
    parts = [("", session)] + [
        (f"subagent {s.agent_id or s.path.stem}", s) for s in session.sidecars
    ]
    return [
        (heading, [m for m in part.messages if m.text.strip() or m.tool_calls or m.result])
        for heading, part in parts
    ]


def message_heading(message: Message) -> str:
    return " · ".join(filter(None, (message.role, minute(message.timestamp))))


def call_index(session: Session) -> dict[str, ToolCall]:
    return {call.call_id: call for part in session.all_sessions() for call in part.tool_calls}


def fold_of(message: Message, calls: dict[str, ToolCall]) -> Fold | None:
    """The fold of a tool result or of harness text; None for a message shown in full."""
    result = message.result
    if result is None:
        if message.kind not in _FOLDED_KINDS:
            return None
        size = human_bytes(len(message.text.encode()))
        return Fold(f"{_FOLD_LABELS[message.kind]} · {size}", message.text)
    what = result.summary or result.tool or "tool result"
    if result.tool and not what.startswith(result.tool):
        what = f"{result.tool}: {what}"
    body, is_diff = result.text, False
    if result.diff and not result.is_error:
        body, is_diff = _diff_with_header(result.diff, calls.get(result.call_id)), True
    facts = [what, human_bytes(len(body.encode()))]
    if is_diff:
        facts.append(_diff_stat(result.diff))
    if result.is_error:
        facts.append("error")
    return Fold(" · ".join(facts), body, is_diff=is_diff, is_error=result.is_error)


def _diff_with_header(diff: str, call: ToolCall | None) -> str:
    target = str((call.input if call else {}).get("file_path") or "file")
    return f"--- {target}\n+++ {target}\n{diff}"


def _diff_stat(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+"))
    removed = sum(1 for line in lines if line.startswith("-"))
    return f"+{added} -{removed}"


def minute(timestamp: str | None) -> str:
    """An ISO-8601 time as people scan it: `2026-01-02 03:04` (UTC, as recorded)."""
    return (timestamp or "")[:16].replace("T", " ")


def render(loaded: LoadedSession, fmt: str = "text", *, results: bool = False) -> str:
    """The session as `fmt` (text, markdown, json); tool results unfolded when `results`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps(session_json(loaded, results=results), indent=2, ensure_ascii=False)
    lines = _markdown_lines(loaded, results) if fmt == "markdown" else _text_lines(loaded, results)
    return "\n".join(lines).rstrip() + "\n"


def header_facts(loaded: LoadedSession) -> list[str]:
    session = loaded.session
    parts = session.all_sessions()
    calls = sum(len(part.tool_calls) for part in parts)
    messages = sum(len(part.messages) for part in parts)
    where = [
        f"{name} {value}"
        for name, value in (
            ("project", session.cwd),
            ("branch", session.git_branch),
            ("model", session.model),
        )
        if value
    ]
    span = f"{minute(session.started_at) or '?'} → {minute(session.ended_at) or '?'}"
    return [" · ".join(where), f"{span} · {messages} messages · {calls} tool calls"]


def _text_lines(loaded: LoadedSession, results: bool) -> Iterator[str]:
    yield loaded.label + (f" · {loaded.title}" if loaded.title else "")
    yield from (fact for fact in header_facts(loaded) if fact)
    calls = call_index(loaded.session)
    for heading, messages in session_parts(loaded.session):
        if heading:
            yield ""
            yield f"=== {heading} ==="
        for message in messages:
            yield ""
            yield from _text_message(message, calls, results)


def _text_message(message: Message, calls: dict[str, ToolCall], results: bool) -> Iterator[str]:
    fold = fold_of(message, calls)
    if fold is not None:
        yield f"{'▾' if results else '▸'} {message_heading(message)} · {fold.line}"
        if results:
            yield from _indented(fold.body)
        return
    yield message_heading(message)
    yield from _indented(message.text)
    for call in message.tool_calls:
        yield f"    → {call.summary or call.tool}"


def _indented(text: str) -> Iterator[str]:
    for line in text.splitlines():
        yield f"    {line}".rstrip()


def _markdown_lines(loaded: LoadedSession, results: bool) -> Iterator[str]:
    from capy.sessions.markdown import fenced, inert_markdown

    yield f"# {' '.join(inert_markdown(loaded.title or loaded.label).split())}"
    yield ""
    yield f"- session: `{loaded.label}`"
    yield from (f"- {fact}" for fact in header_facts(loaded) if fact)
    calls = call_index(loaded.session)
    for heading, messages in session_parts(loaded.session):
        if heading:
            yield ""
            yield f"## {heading}"
        for message in messages:
            yield ""
            fold = fold_of(message, calls)
            if fold is None:
                yield f"### {message_heading(message)}"
                yield ""
                yield inert_markdown(message.text)
                yield from (
                    f"- call: {_code_span(c.summary or c.tool)}" for c in message.tool_calls
                )
                continue
            yield f"**{message_heading(message)}** · {_code_span(fold.line)}"
            if results and fold.body:
                yield ""
                yield fenced(fold.body, "diff" if fold.is_diff else "")


def _code_span(text: str) -> str:
    """`text` as inline code, fenced by more backticks than any run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def session_json(loaded: LoadedSession, *, results: bool = False) -> dict:
    session = loaded.session
    calls = call_index(session)
    parts = [
        {"heading": heading, "messages": [_message_json(m, calls, results) for m in messages]}
        for heading, messages in session_parts(session)
    ]
    return {
        "session": loaded.label,
        "project": session.cwd,
        "git_branch": session.git_branch,
        "model": session.model,
        "title": loaded.title,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "results_shown": results,
        "messages": parts[0]["messages"],
        "subagents": parts[1:],
    }


def _message_json(message: Message, calls: dict[str, ToolCall], results: bool) -> dict:
    fold = fold_of(message, calls)
    item: dict = {"role": message.role, "kind": message.kind, "timestamp": message.timestamp}
    if fold is None:
        item["text"] = message.text
    else:
        item["fold"] = fold.line
        if message.result is not None:
            item["tool"], item["summary"] = message.result.tool, message.result.summary
        item["size"] = len(fold.body.encode())
        item["is_error"] = fold.is_error
        if results:
            item["diff" if fold.is_diff else "text"] = fold.body
    if message.tool_calls:
        item["tool_calls"] = [
            {"tool": call.tool, "summary": call.summary}
            | ({"input": call.input} if results else {})
            for call in message.tool_calls
        ]
    return item
