"""Plain text: paragraphs when the blank-line sectioning looks real, else line windows; either
way titled by the heading path in force where the chunk starts.

Plain text has headings too: an RFC's "4.6.  RESET (type=0x5)", an underlined title, a short
line standing alone ("Customer impact"). The pack's heading rules
find them and give each a depth; a chunk is titled by the path of headings above its first
line, as a markdown chunk is, so bm25 weighs the section names, a document title is shared by
every chunk, and the agent sees where the chunk sits. A paragraph that is only a heading joins
the paragraph after it instead of standing alone: a heading without its text answers nothing.
Text with no heading keeps the label-and-lines title.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from capy.chunking.pieces import Piece, heading_paths, merge_small, nbytes, window_pieces
from capy.chunking.prose import reads_as_prose
from capy.rules.views.chunking import ChunkingPack

_UNDERLINE = re.compile(r"[=-]{3,}[ \t]*")


def chunk_plaintext(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    headings = _headings(text, lines, rules)
    paragraphs = _paragraphs(lines)
    if _looks_sectioned(paragraphs, lines, rules):
        paragraphs = _attach_headings(paragraphs, headings, lines)
        pieces = merge_small(_paragraph_pieces(paragraphs, lines, rules), rules)
    elif _whole_prose(text, lines, rules):
        pieces = [Piece(None, text, (1, len(lines)))]
    else:
        pieces = _windows(lines, 0, len(lines), rules)
    return _titled(pieces, headings)


def _whole_prose(text: str, lines: list[str], rules: ChunkingPack) -> bool:
    """A short text that reads as prose stays one chunk (see capy.chunking.prose)."""
    prose = rules.plaintext.prose
    limit = min(prose.whole_max_bytes, rules.max_chunk_bytes)
    return (
        len(lines) > rules.plaintext.window_lines
        and nbytes(text) <= limit
        and (reads_as_prose(lines, prose))
    )


def _paragraph_pieces(
    paragraphs: list[tuple[int, int]], lines: list[str], rules: ChunkingPack
) -> list[Piece]:
    pieces: list[Piece] = []
    for start, end in paragraphs:
        content = "\n".join(lines[start:end])
        if nbytes(content) <= rules.max_chunk_bytes:
            pieces.append(Piece(None, content, (start + 1, end)))
        else:
            pieces.extend(_windows(lines, start, end, rules))
    return pieces


def _windows(lines: list[str], start: int, end: int, rules: ChunkingPack) -> list[Piece]:
    config = rules.plaintext
    return window_pieces(
        lines[start:end],
        first_line=start + 1,
        window=config.window_lines,
        overlap=config.overlap_lines,
        rules=rules,
    )


def _headings(text: str, lines: list[str], rules: ChunkingPack) -> dict[int, str]:
    """Line index -> the heading path in force from that line on, for every heading line."""
    return heading_paths(
        text, lines, rules.plaintext.active_heading_rules, rules.markdown.title_separator
    )


def _attach_headings(
    paragraphs: list[tuple[int, int]], headings: dict[int, str], lines: list[str]
) -> list[tuple[int, int]]:
    """A paragraph that holds nothing but a heading (and its underline) joins the next one."""
    joined: list[tuple[int, int]] = []
    pending: int | None = None
    for start, end in paragraphs:
        if _heading_only(start, end, headings, lines) and (start, end) != paragraphs[-1]:
            pending = start if pending is None else pending  # a run of headings waits too
            continue
        if pending is not None:
            start, pending = pending, None
        joined.append((start, end))
    return joined


def _heading_only(start: int, end: int, headings: dict[int, str], lines: list[str]) -> bool:
    """A heading line alone, or an underlined heading (its rule matched the first line)."""
    if start not in headings:
        return False
    return end - start == 1 or (
        end - start == 2 and _UNDERLINE.fullmatch(lines[start + 1]) is not None
    )


def _titled(pieces: list[Piece], headings: dict[int, str]) -> list[Piece]:
    if not headings:
        return pieces
    order = sorted(headings)
    for piece in pieces:
        if piece.title is None and piece.span is not None:
            at = bisect_right(order, piece.span[0] - 1) - 1
            if at >= 0:
                piece.title = headings[order[at]]
    return pieces


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """Half-open line ranges of the runs of non-blank lines."""
    spans: list[tuple[int, int]] = []
    start = -1
    for index, line in enumerate(lines):
        if line.strip():
            if start < 0:
                start = index
        elif start >= 0:
            spans.append((start, index))
            start = -1
    if start >= 0:
        spans.append((start, len(lines)))
    return spans


def _looks_sectioned(
    paragraphs: list[tuple[int, int]], lines: list[str], rules: ChunkingPack
) -> bool:
    limits = rules.plaintext.paragraphs
    if not limits.min_sections <= len(paragraphs) <= limits.max_sections:
        return False
    return all(
        nbytes("\n".join(lines[start:end])) <= limits.max_section_bytes for start, end in paragraphs
    )
