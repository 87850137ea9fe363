"""Plain text: paragraphs when the blank-line sectioning looks real, else line windows."""

from __future__ import annotations

from capy.chunking.pieces import Piece, merge_small, nbytes, window_pieces
from capy.rules.views.chunking import ChunkingPack


def chunk_plaintext(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    config = rules.plaintext
    paragraphs = _paragraphs(lines)
    if not _looks_sectioned(paragraphs, lines, rules):
        return window_pieces(
            lines,
            first_line=1,
            window=config.window_lines,
            overlap=config.overlap_lines,
            rules=rules,
        )
    pieces: list[Piece] = []
    for start, end in paragraphs:
        block = lines[start:end]
        content = "\n".join(block)
        if nbytes(content) <= rules.max_chunk_bytes:
            pieces.append(Piece(None, content, (start + 1, end)))
        else:
            pieces.extend(
                window_pieces(
                    block,
                    first_line=start + 1,
                    window=config.window_lines,
                    overlap=config.overlap_lines,
                    rules=rules,
                )
            )
    return merge_small(pieces, rules)


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
