"""Conversation transcripts: one chunk per turn, each tool call kept with its result.

A transcript in text form ("Human: ...", "Assistant: ...", "[tool_use: Bash] npm test",
"[tool_result]" and the output) cut by paragraphs or line windows loses what makes it
searchable: a command lands in one chunk and what it printed in the next, and a short request
from the user is glued to whatever follows it. Here the pack's turn rules mark where each turn
starts; a turn runs until the next marker, and a tool result joins the call before it. A turn
titled by its role ("user (line 172)") lets a query such as "what did the user say about X"
match the user's own words, and a tool turn titled by its call ("Bash: cat go.mod") puts the
command where bm25 weighs it most. A turn over the size limit is cut into line windows that
keep its title; tiny turns ("Assistant: Let me check.") are folded into a neighbour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capy.chunking.pieces import Piece, fallback_title, merge_small, nbytes, window_pieces
from capy.rules.views.chunking import ChunkingPack, TurnRole

# What a turn is called in a title when no tool name is known.
_ROLE_NAMES = {
    TurnRole.USER: "user",
    TurnRole.ASSISTANT: "assistant",
    TurnRole.TOOL_CALL: "tool call",
    TurnRole.TOOL_RESULT: "tool result",
    None: "",  # text before the first marker: titled by the source label
}


@dataclass
class _Turn:
    role: TurnRole | None
    start: int  # first line, 0-based
    end: int  # one past the last line
    title: str | None = None  # fixed title (tool calls); None: role and line span


def chunk_transcript(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    pieces: list[Piece] = []
    for turn in _turns(lines, rules):
        pieces.extend(_pieces(turn, lines, label, rules))
    return merge_small(pieces, rules)


def _turns(lines: list[str], rules: ChunkingPack) -> list[_Turn]:
    config = rules.transcript
    turns: list[_Turn] = [_Turn(None, 0, 0)]
    for index, line in enumerate(lines):
        found = config.turn_of(line)
        if found is None:
            continue
        rule, match = found
        turns[-1].end = index
        if rule.role is TurnRole.TOOL_RESULT and turns[-1].role is TurnRole.TOOL_CALL:
            continue  # the result belongs to its call: one chunk holds both
        turns.append(_Turn(rule.role, index, index, _call_title(match, rule.role, rules)))
    turns[-1].end = len(lines)
    return [turn for turn in (_trimmed(turn, lines) for turn in turns) if turn.end > turn.start]


def _call_title(match: re.Match[str], role: TurnRole, rules: ChunkingPack) -> str | None:
    if role is not TurnRole.TOOL_CALL:
        return None
    groups = match.groupdict()
    tool = " ".join((groups.get("tool") or "").split()) or _ROLE_NAMES[role]
    called = groups.get("input") or ""
    if not called.strip():
        return tool
    return f"{tool}: {rules.titles.clip(called, rules.transcript.max_tool_input_chars)}"


def _trimmed(turn: _Turn, lines: list[str]) -> _Turn:
    """Without the blank lines that separate it from the next turn."""
    while turn.end > turn.start and not lines[turn.end - 1].strip():
        turn.end -= 1
    return turn


def _pieces(turn: _Turn, lines: list[str], label: str, rules: ChunkingPack) -> list[Piece]:
    config = rules.transcript
    # A turn that fits one chunk stays whole, however many lines it has.
    window = config.window_lines
    if _nbytes(turn, lines) <= rules.max_chunk_bytes:
        window = max(window, turn.end - turn.start)
    windows = window_pieces(
        lines[turn.start : turn.end],
        first_line=turn.start + 1,
        window=window,
        overlap=config.overlap_lines,
        rules=rules,
        title=turn.title,
    )
    if turn.title is None:
        name = _ROLE_NAMES[turn.role] or label
        for piece in windows:
            if piece.span is not None:
                piece.title = fallback_title(rules, name, *piece.span)
    return windows


def _nbytes(turn: _Turn, lines: list[str]) -> int:
    return sum(nbytes(line) + 1 for line in lines[turn.start : turn.end]) - 1
