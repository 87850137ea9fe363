"""Logs and tool output: line windows, plus a chunk of its own for each distinct error line.

The error rules run once over the whole text (finditer), not once per line, so a 100k-line log
costs a few regex passes. Each flagged line gets a chunk titled by its message (timestamp
stripped) holding a little context before it and the traceback or stack that usually follows.
Identical messages get one chunk, and the cap keeps errors first, then failures, then warnings.
"""

from __future__ import annotations

from bisect import bisect_right

from capy.chunking.pieces import Piece, line_starts, nbytes, split_long_line, window_pieces
from capy.rules.views.chunking import ChunkingPack, Severity

_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(Severity)}


def chunk_log(text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    lines = text.split("\n")
    config = rules.log
    windows = window_pieces(
        lines,
        first_line=1,
        window=config.window_lines,
        overlap=config.overlap_lines,
        rules=rules,
        breaks=_banner_lines(text, lines, rules),
        slack=config.banner_slack_lines,
    )
    errors = [_error_piece(lines, index, rules) for index in _error_lines(text, lines, rules)]
    # Stable sort: an error chunk follows the window that starts on the same line.
    return sorted(windows + errors, key=lambda piece: piece.span[0] if piece.span else 0)


def _banner_lines(text: str, lines: list[str], rules: ChunkingPack) -> list[int]:
    """Sorted indices of the lines that head a section of the report."""
    banner_rules = rules.log.active_banner_rules
    if not banner_rules:
        return []
    starts = line_starts(lines)
    found = {
        bisect_right(starts, match.start()) - 1
        for rule in banner_rules
        for match in rule.regex.finditer(text)
    }
    return sorted(found)


def _error_lines(text: str, lines: list[str], rules: ChunkingPack) -> list[int]:
    """Indices of the flagged lines to chunk: distinct messages, worst severity first, capped."""
    starts = line_starts(lines)
    rank: dict[int, int] = {}
    for rule in rules.log.active_error_rules:
        severity = _SEVERITY_RANK.get(rule.severity, len(_SEVERITY_RANK))
        for match in rule.regex.finditer(text):
            # A match may begin on the newline before its line (`(?:^|\s)ERROR`); its last
            # character always sits on the flagged line.
            line = bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            if severity < rank.get(line, len(_SEVERITY_RANK) + 1):
                rank[line] = severity
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
