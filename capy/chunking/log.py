"""Logs and tool output: line windows, plus a chunk of its own for each distinct error line.

A report with section banners (pytest's `____ test_name ____`, a CI step's `##[group]`, a
`commit <sha>` of git log) is windowed section by section: a banner always starts a chunk and
titles every window of its section by the banner path in force ("FAILURES >
test_refresh_token_expiry"), so bm25 weighs the test, step or commit a chunk belongs to, and
one failure never shares a chunk with the next. A section holding nothing but its banner (one
banner straight after another) joins the section after it, as does a line or two before the
first banner. Longer text before it, and logs without banners, keep label-and-lines titles.

The error rules run once over the whole text (capy.chunking.flagging, through the secret
scanner's windowed engine), not once per line, so the scan stays linear in the input. Each
flagged line gets a chunk titled by its message (timestamp stripped) holding a little context
before it and the traceback or stack that usually follows.
Identical messages get one chunk, and the cap keeps errors first, then failures, then warnings.
"""

from __future__ import annotations

from capy.chunking.flagging import flagged_lines
from capy.chunking.pieces import (
    Piece,
    heading_paths,
    nbytes,
    split_long_line,
    window_pieces,
)
from capy.rules.views.chunking import ChunkingPack


def chunk_log(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    config = rules.log
    windows = [
        piece
        for start, end, title in _sections(text, lines, rules)
        for piece in window_pieces(
            lines[start:end],
            first_line=start + 1,
            window=config.window_lines,
            overlap=config.overlap_lines,
            rules=rules,
            title=title,
        )
    ]
    errors = [_error_piece(lines, index, rules) for index in _error_lines(text, lines, rules)]
    # Stable sort: an error chunk follows the window that starts on the same line.
    return sorted(windows + errors, key=lambda piece: piece.span[0] if piece.span else 0)


def _sections(
    text: str, lines: list[str], rules: ChunkingPack
) -> list[tuple[int, int, str | None]]:
    """(start, end, banner path) of each run of lines a banner heads; the lines before the
    first banner have no title. A section with nothing but its banner, or too small to stand
    alone, joins the next (the last joins the one before it)."""
    paths = heading_paths(
        text, lines, rules.log.active_banner_rules, rules.markdown.title_separator
    )
    starts = sorted({0, *paths})
    bounds = [*starts[1:], len(lines)]
    sections: list[tuple[int, int, str | None]] = []
    held: int | None = None  # start of the sections waiting to join the next
    for start, end in zip(starts, bounds, strict=True):
        first = start if held is None else held
        if _holds(lines, start + (start in paths), end, rules.min_chunk_bytes):
            sections.append((first, end, paths.get(start)))
            held = None
        elif end < len(lines):
            held = first
        elif sections:
            sections[-1] = (sections[-1][0], end, sections[-1][2])
        else:
            sections.append((first, end, paths.get(start)))
    return sections


def _holds(lines: list[str], start: int, end: int, size: int) -> bool:
    """Whether lines[start:end] hold at least `size` bytes of text (stops once they do)."""
    total = 0
    for line in lines[start:end]:
        total += nbytes(line.strip())
        if total >= size:
            return True
    return False


def _error_lines(text: str, lines: list[str], rules: ChunkingPack) -> list[int]:
    """Indices of the flagged lines to chunk: distinct messages, worst severity first, capped."""
    rank = flagged_lines(text, rules.log)
    seen: set[str] = set()
    chosen: list[int] = []
    for line in sorted(rank, key=lambda index: (rank[index], index)):
        message = _message(lines[line], rules)
        if message in seen or not message:
            continue
        seen.add(message)
        chosen.append(line)
        if len(chosen) >= rules.log.max_error_chunks:
            break
    return sorted(chosen)


def _message(line: str, rules: ChunkingPack) -> str:
    return rules.log.title_prefix_regex.sub("", line.strip(), count=1).strip()


def _error_piece(lines: list[str], index: int, rules: ChunkingPack) -> Piece:
    """The flagged line with its context, shrinking the context (after first) to fit."""
    context, limit = rules.log.error_context, rules.max_chunk_bytes
    title = _message(lines[index], rules) or None
    if nbytes(lines[index]) > limit:
        head = split_long_line(lines[index], limit, rules.plaintext.whitespace_break_ratio)[0]
        return Piece(title, head, (index + 1, index + 1))
    start = max(0, index - context.before_lines)
    end = min(len(lines), index + context.after_lines + 1)
    size = sum(nbytes(line) + 1 for line in lines[start:end]) - 1
    while size > limit and end > index + 1:
        end -= 1
        size -= nbytes(lines[end]) + 1
    while size > limit and start < index:
        size -= nbytes(lines[start]) + 1
        start += 1
    return Piece(title, "\n".join(lines[start:end]), (start + 1, end))
