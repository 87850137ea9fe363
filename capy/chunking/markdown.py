"""Markdown: one chunk per heading section, titled by the heading stack.

Fences are tracked everywhere, so a `# comment` inside a code block is never a heading and a fence
never straddles two chunks. A fence that alone exceeds max_chunk_bytes is the one exception to
"never split": it becomes chunks of its own, cut at line boundaries, each re-opened and re-closed
with the original fence lines so every piece is still a valid code block. That keeps every chunk
within max_chunk_bytes without a second, larger limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capy.chunking.pieces import (
    Piece,
    line_windows,
    merge_small,
    nbytes,
    split_long_line,
    window_pieces,
)
from capy.rules.views.chunking import ChunkingPack

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(={3,}|-{3,})[ \t]*$")


@dataclass
class _Block:
    lines: list[str]
    fence: bool


def chunk_markdown(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    pieces: list[Piece] = []
    for path, start, end in _sections(lines, rules):
        body = lines[start:end]
        if not any(line.strip() for line in body):
            continue
        title = rules.markdown.title_separator.join(path) or None
        pieces.extend(_split_section(title, body, start + 1, rules))
    return merge_small(pieces, rules)


def _fence_closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and stripped.startswith(marker)
        and set(stripped) == {marker[0]}
    )


def _sections(lines: list[str], rules: ChunkingPack) -> list[tuple[tuple[str, ...], int, int]]:
    """(heading path, start, end) for each section; a heading line opens its own section."""
    depth = rules.markdown.title_heading_depth
    stack: list[tuple[int, str]] = []
    sections: list[tuple[tuple[str, ...], int, int]] = []
    path: tuple[str, ...] = ()
    start, marker, para_start, fence_end = 0, "", -1, -1
    for index, line in enumerate(lines):
        if marker:
            if _fence_closes(line, marker):
                marker, fence_end = "", index
            continue
        opened = _FENCE.match(line)
        if opened:
            marker, para_start = opened.group(1), -1
            continue
        heading = _heading_at(lines, index, para_start, fence_end)
        if not line.strip():
            para_start = -1
        elif para_start < 0:
            para_start = index
        if heading is None or heading[0] > depth:
            continue
        level, name, head = heading
        if head > start:
            sections.append((path, start, head))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
        path, start, para_start = tuple(text for _, text in stack), head, -1
    sections.append((path, start, len(lines)))
    return sections


def _heading_at(
    lines: list[str], index: int, para_start: int, fence_end: int
) -> tuple[int, str, int] | None:
    """(level, text, first line) when line `index` is an ATX heading or a setext underline."""
    line = lines[index]
    atx = _ATX.match(line)
    if atx and atx.group(2).strip():
        return len(atx.group(1)), atx.group(2).strip(), index
    underline = _SETEXT.match(line)
    # Setext only under a one-line paragraph: a `---` after a list or a longer paragraph is far
    # more often a rule than a heading, and front matter closes with one.
    if underline and para_start == index - 1 and para_start > fence_end:
        text = lines[index - 1].strip()
        if text and not _ATX.match(lines[index - 1]):
            return (1 if underline.group(1)[0] == "=" else 2), text, index - 1
    return None


def _split_section(
    title: str | None, body: list[str], first_line: int, rules: ChunkingPack
) -> list[Piece]:
    first = next(index for index, line in enumerate(body) if line.strip())
    last = max(index for index, line in enumerate(body) if line.strip())
    body = body[first : last + 1]
    span = (first_line + first, first_line + last)
    text = "\n".join(body)
    if nbytes(text) <= rules.max_chunk_bytes:
        return [Piece(title, text, span)]
    return [
        Piece(title, piece.content, span) for piece in _pack(title, _blocks(body, rules), rules)
    ]


def _blocks(lines: list[str], rules: ChunkingPack) -> list[_Block]:
    """Paragraphs (or single lines) and whole fences, in order; blank lines dropped."""
    per_line = rules.markdown.oversize_split == "line"
    fences = rules.markdown.never_split_fences
    blocks: list[_Block] = []
    current: list[str] = []
    marker = ""
    for line in lines:
        if marker:
            current.append(line)
            if _fence_closes(line, marker):
                blocks.append(_Block(current, True))
                current, marker = [], ""
            continue
        opened = _FENCE.match(line) if fences else None
        if opened or not line.strip() or per_line:
            if current:
                blocks.append(_Block(current, False))
            current = []
        if opened:
            marker = opened.group(1)
        if line.strip():
            current.append(line)
    if current:
        blocks.append(_Block(current, bool(marker)))
    return blocks


def _pack(title: str | None, blocks: list[_Block], rules: ChunkingPack) -> list[Piece]:
    """Greedy packing of blocks; each new piece opens with the tail of the previous text block."""
    limit, overlap_bytes = rules.max_chunk_bytes, rules.markdown.overlap_bytes
    pieces: list[Piece] = []
    current: list[str] = []
    size, last_text = 0, ""
    for block in blocks:
        text = "\n".join(block.lines)
        block_size = nbytes(text)
        if block_size > limit:
            if current:
                pieces.append(Piece(title, "\n\n".join(current)))
            current, size, last_text = [], 0, ""
            pieces.extend(_oversized_block(title, block, rules))
            continue
        if current and size + 2 + block_size > limit:
            pieces.append(Piece(title, "\n\n".join(current)))
            tail = _tail(last_text, overlap_bytes) if last_text else ""
            fits = tail and nbytes(tail) + 2 + block_size <= limit
            current = [tail] if fits else []
            size = nbytes(tail) if fits else 0
        current.append(text)
        size += block_size + (2 if size else 0)
        last_text = "" if block.fence else text
    if current:
        pieces.append(Piece(title, "\n\n".join(current)))
    return pieces


def _oversized_block(title: str | None, block: _Block, rules: ChunkingPack) -> list[Piece]:
    if not block.fence:
        window = len(block.lines)
        return window_pieces(
            block.lines, first_line=1, window=window, overlap=0, rules=rules, title=title
        )
    opening = block.lines[0]
    closed = len(block.lines) > 1 and _fence_closes(block.lines[-1], _FENCE.match(opening).group(1))
    closing = block.lines[-1] if closed else _FENCE.match(opening).group(1)
    inner = block.lines[1:-1] if closed else block.lines[1:]
    budget = rules.max_chunk_bytes - nbytes(opening) - nbytes(closing) - 2
    if budget < rules.min_chunk_bytes:  # an absurd fence line: plain line windows instead
        window = len(block.lines)
        return window_pieces(
            block.lines, first_line=1, window=window, overlap=0, rules=rules, title=title
        )
    ratio = rules.plaintext.whitespace_break_ratio
    pieces: list[Piece] = []
    for start, end in line_windows(inner, len(inner), 0, budget):
        parts = ["\n".join(inner[start:end])]
        if end - start == 1:
            parts = split_long_line(parts[0], budget, ratio)
        pieces.extend(Piece(title, f"{opening}\n{part}\n{closing}") for part in parts)
    return pieces


def _tail(text: str, limit: int) -> str:
    """The last whole lines of text within limit bytes, else the last words of its last line."""
    lines = text.split("\n")
    taken: list[str] = []
    size = 0
    for line in reversed(lines):
        size += nbytes(line) + 1
        if size > limit + 1:
            break
        taken.append(line)
    if taken:
        return "\n".join(reversed(taken))
    tail = lines[-1].encode("utf-8")[-limit:].decode("utf-8", "ignore")
    space = tail.find(" ")
    return tail[space + 1 :] if space >= 0 else tail
