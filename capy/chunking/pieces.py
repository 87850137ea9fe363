"""Size-bounded building blocks every chunker shares: byte measuring, cutting an over-long line,
line windows with overlap, heading paths, and merging pieces too small to stand alone.

Sizes are UTF-8 bytes because that is what the index stores and what `max_chunk_bytes` means.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from capy.rules.views.chunking import ChunkingPack, HeadingRule


@dataclass
class Piece:
    """A chunk under construction: mutable while chunkers merge neighbours."""

    title: str | None  # None: titled at the end by label and line span (fallback_title)
    content: str
    span: tuple[int, int] | None = None  # 1-based first and last line, for fallback titles


def nbytes(text: str) -> int:
    # isascii() reads a flag CPython keeps on every string: ASCII text is measured without
    # encoding a copy (chunkers measure every line).
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def text_line_starts(text: str) -> list[int]:
    """Character offset of each line of `text`, without splitting it into lines."""
    starts, offset = [0], text.find("\n")
    while offset != -1:
        starts.append(offset + 1)
        offset = text.find("\n", offset + 1)
    return starts


def line_starts(lines: list[str]) -> list[int]:
    """Character offset of each line in the text the lines were split from (on "\\n")."""
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return starts


def heading_paths(
    text: str, lines: list[str], rules_in_force: Sequence[HeadingRule], separator: str
) -> dict[int, str]:
    """Line index -> the heading path in force from that line on, for every line a rule finds
    a heading on: a heading closes the open ones at its depth or deeper, as in markdown."""
    if not rules_in_force:
        return {}
    starts = line_starts(lines)
    found: dict[int, tuple[int, str]] = {}
    for rule in rules_in_force:
        for match in rule.regex.finditer(text):
            start, depth, title = rule.heading(match)
            found.setdefault(bisect_right(starts, start) - 1, (depth, title))
    paths: dict[int, str] = {}
    stack: list[tuple[int, str]] = []
    for line in sorted(found):
        depth, title = found[line]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, title))
        paths[line] = separator.join(title for _, title in stack)
    return paths


def fallback_title(rules: ChunkingPack, label: str, first: int, last: int) -> str:
    """`label (lines 41-60)`: the label is clipped, never the line range that tells pieces apart."""
    suffix = f" (lines {first}-{last})" if first != last else f" (line {first})"
    base = " ".join(label.split()) or rules.titles.fallback
    room = rules.titles.max_chars - len(suffix)
    if len(base) > room:
        base = base[: max(room - len(rules.titles.ellipsis), 1)].rstrip() + rules.titles.ellipsis
    return base + suffix


def split_long_line(line: str, max_bytes: int, break_ratio: float) -> list[str]:
    """Cut a line into pieces of at most max_bytes, preferring whitespace in the slice's tail.

    Works on the encoded bytes so a 10 MB line costs one pass; cuts never land inside a UTF-8
    sequence. Whitespace stays at the end of the piece before it, so joining restores the line.
    """
    data = line.encode("utf-8")
    if len(data) <= max_bytes:
        return [line]
    pieces: list[str] = []
    start, size = 0, len(data)
    floor = int(max_bytes * break_ratio)
    while size - start > max_bytes:
        end = start + max_bytes
        while end > start + 1 and (data[end] & 0xC0) == 0x80:
            end -= 1  # back off to the first byte of a character
        space = max(data.rfind(b" ", start + floor, end), data.rfind(b"\t", start + floor, end))
        if space > start:
            end = space + 1
        pieces.append(data[start:end].decode("utf-8", "replace"))
        start = end
    pieces.append(data[start:].decode("utf-8", "replace"))
    return pieces


def line_windows(
    lines: list[str], window: int, overlap: int, max_bytes: int
) -> list[tuple[int, int]]:
    """Half-open [start, end) windows of at most `window` lines and max_bytes bytes.

    Consecutive windows share `overlap` lines, unless sharing would leave no room for a new line
    (long lines): a window always brings at least one line the previous one did not have. A
    single line over max_bytes is a window of its own; callers cut it with split_long_line.
    """
    sizes = [nbytes(line) + 1 for line in lines]
    spans: list[tuple[int, int]] = []
    start, done = 0, 0
    while done < len(lines):
        end = _fill(sizes, start, window, max_bytes)
        if end <= done:  # the overlap used up the room: start fresh after the last window
            start = done
            end = _fill(sizes, start, window, max_bytes)
        spans.append((start, end))
        done = end
        start = max(end - overlap, start + 1)
    return spans


def _fill(sizes: list[int], start: int, window: int, max_bytes: int) -> int:
    end, total = start, 0
    limit = min(len(sizes), start + max(window, 1))
    while end < limit and (end == start or total + sizes[end] <= max_bytes + 1):
        total += sizes[end]
        end += 1
    return end


def window_pieces(
    lines: list[str],
    *,
    first_line: int,
    window: int,
    overlap: int,
    rules: ChunkingPack,
    title: str | None = None,
    max_bytes: int | None = None,
) -> list[Piece]:
    """Line windows as pieces; titled `title` when given, else later by their line span."""
    out: list[Piece] = []
    limit = max_bytes or rules.max_chunk_bytes
    ratio = rules.plaintext.whitespace_break_ratio
    for start, end in line_windows(lines, window, overlap, limit):
        span = (first_line + start, first_line + end - 1)
        text = "\n".join(lines[start:end])
        if end - start == 1 and nbytes(text) > limit:
            out.extend(Piece(title, part, span) for part in split_long_line(text, limit, ratio))
        else:
            out.append(Piece(title, text, span))
    return out


def bounded(pieces: list[Piece], rules: ChunkingPack) -> list[Piece]:
    """Safety net: re-cut any piece still over max_chunk_bytes, keeping its title."""
    out: list[Piece] = []
    for piece in pieces:
        if nbytes(piece.content) <= rules.max_chunk_bytes:
            out.append(piece)
            continue
        lines = piece.content.split("\n")
        first = piece.span[0] if piece.span else 1
        for part in window_pieces(
            lines, first_line=first, window=len(lines), overlap=0, rules=rules
        ):
            out.append(Piece(piece.title, part.content, part.span if piece.span else None))
    return out


def merge_small(
    pieces: list[Piece], rules: ChunkingPack, *, separator: str = "\n\n"
) -> list[Piece]:
    """Fold pieces under min_chunk_bytes into a neighbour (the next one first) when they fit.

    The merged piece keeps the title of the larger part: a lone heading merged into its first
    subsection is better titled by the subsection's path, which already contains the heading.
    """
    out: list[Piece] = []
    pending: Piece | None = None
    for piece in pieces:
        if pending is not None:
            piece = _join(pending, piece, separator, rules) or _flush(out, pending, piece)
            pending = None
        if nbytes(piece.content.strip()) < rules.min_chunk_bytes:
            pending = piece
        else:
            out.append(piece)
    if pending is not None:
        joined = _join(out[-1], pending, separator, rules) if out else None
        if joined is not None:
            out[-1] = joined
        else:
            out.append(pending)
    return out


def _flush(out: list[Piece], pending: Piece, piece: Piece) -> Piece:
    out.append(pending)
    return piece


def _join(first: Piece, second: Piece, separator: str, rules: ChunkingPack) -> Piece | None:
    content = first.content + separator + second.content
    if nbytes(content) > rules.max_chunk_bytes:
        return None
    larger = first if nbytes(first.content) > nbytes(second.content) else second
    spans = [piece.span for piece in (first, second) if piece.span]
    span = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None
    return Piece(larger.title, content, span)
