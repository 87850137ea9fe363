"""Source code: one chunk per definition, titled by its name (and its enclosing definitions).

Definitions come from the pack's definition rules, run once over the whole text. A definition
keeps the comments, doc comments and decorators written directly above it (no blank line in
between), so `/** Refresh ... */` travels with the function it documents.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from capy.chunking.pieces import Piece, line_starts, nbytes, window_pieces
from capy.rules.views.chunking import ChunkingPack, DefinitionRule


@dataclass
class _Segment:
    title: str | None
    start: int  # first line index
    end: int  # one past the last line index


def chunk_code(text: str, label: str, rules: ChunkingPack, language: str | None) -> list[Piece]:
    lines = text.split("\n")
    config = rules.code
    definitions = _definitions(text, lines, _rules_for(text, language, rules))
    if not definitions:
        return window_pieces(
            lines,
            first_line=1,
            window=config.window_lines,
            overlap=config.overlap_lines,
            rules=rules,
        )
    segments = _merge_short(_segments(lines, definitions, rules), lines, rules)
    pieces: list[Piece] = []
    for segment in segments:
        end = segment.end
        while end > segment.start and not lines[end - 1].strip():
            end -= 1
        body = lines[segment.start : end]
        content = "\n".join(body)
        if not content.strip():
            continue
        if nbytes(content) <= rules.max_chunk_bytes:
            pieces.append(Piece(segment.title, content, (segment.start + 1, end)))
            continue
        pieces.extend(
            window_pieces(
                body,
                first_line=segment.start + 1,
                window=config.window_lines,
                overlap=config.overlap_lines,
                rules=rules,
                title=segment.title,
            )
        )
    return pieces


def _rules_for(text: str, language: str | None, rules: ChunkingPack) -> tuple[DefinitionRule, ...]:
    """The rules for a known language; for an unknown one, the rules of every language whose
    rules fire in the detection sample. Seventeen whole-text regex passes cost about a second
    per megabyte; the two to five languages a sample points at cost a fraction of that."""
    config = rules.code
    if language is not None:
        return config.rules_for(language)
    candidates = config.rules_for(None)
    sample = text[: rules.detection.sample_bytes]
    languages = {
        lang for rule in candidates if rule.regex.search(sample) for lang in rule.languages
    }
    narrowed = tuple(rule for rule in candidates if languages & set(rule.languages))
    return narrowed or candidates


def _definitions(
    text: str, lines: list[str], definition_rules: tuple[DefinitionRule, ...]
) -> list[tuple[int, str]]:
    """(line index, name) of every definition start, first rule in pack order winning a line."""
    starts = line_starts(lines)
    found: dict[int, str] = {}
    for rule in definition_rules:
        for match in rule.regex.finditer(text):
            name = match.group("name") if "name" in rule.regex.groupindex else None
            if name:
                found.setdefault(bisect_right(starts, match.start("name")) - 1, name.strip())
    return sorted(found.items())


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _segments(
    lines: list[str], definitions: list[tuple[int, str]], rules: ChunkingPack
) -> list[_Segment]:
    """The preamble, then one segment per definition from its leading comments to the next."""
    separator = rules.markdown.title_separator
    stack: list[tuple[int, str]] = []
    heads: list[tuple[int, str]] = []
    floor = 0
    for line_index, name in definitions:
        indent = _indent(lines[line_index])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        title = separator.join([parent for _, parent in stack] + [name])
        stack.append((indent, name))
        heads.append((_lead_start(lines, line_index, indent, floor), title))
        floor = line_index + 1
    segments = [_Segment(None, 0, heads[0][0])] if heads[0][0] > 0 else []
    for position, (start, title) in enumerate(heads):
        end = heads[position + 1][0] if position + 1 < len(heads) else len(lines)
        segments.append(_Segment(title, start, end))
    return segments


def _lead_start(lines: list[str], index: int, indent: int, floor: int) -> int:
    """Climb over the comment or decorator lines written directly above a definition."""
    start = index
    while start > floor:
        above = lines[start - 1]
        stripped = above.strip()
        if not stripped or stripped.endswith(("{", "}", ";")):
            break
        depth = _indent(above)
        # Block-comment continuation lines (` * text`) sit one column right of the opener.
        if not (depth == indent or (depth == indent + 1 and stripped.startswith("*"))):
            break
        start -= 1
    return start


def _merge_short(segments: list[_Segment], lines: list[str], rules: ChunkingPack) -> list[_Segment]:
    """Fold definitions shorter than min_definition_lines into the next one when both fit, and
    a definition's opening lines into its first nested definition: a signature and a doc
    comment answer nothing without the body that follows them."""
    minimum = rules.code.min_definition_lines
    separator = rules.markdown.title_separator
    out: list[_Segment] = []
    for segment in segments:
        previous = out[-1] if out else None
        fold = previous is not None and previous.title is not None and bool(segment.title)
        fold = fold and (
            _code_lines(lines, previous) < minimum
            or segment.title.startswith(previous.title + separator)
        )
        if fold and _fits(lines, previous.start, segment.end, rules):
            title = _merged_title(previous.title, segment.title, rules.markdown.title_separator)
            out[-1] = _Segment(title, previous.start, segment.end)
        else:
            out.append(segment)
    return out


def _merged_title(first: str, second: str, separator: str) -> str:
    """`Scheduler` + `Scheduler > __init__` is the latter; `A > add` + `A > due` is `A > add, due`;
    `A, B` + `B > c` is `A, B > c`.

    Titles share their enclosing path once instead of repeating it.
    """
    head, tail = first.split(separator), second.split(separator)
    listed = head[-1].rsplit(", ", 1)
    if len(listed) == 2 and [*head[:-1], listed[1]] == tail[: len(head)]:
        # `Session, TokenError` + `TokenError > constructor` goes on from the last name listed.
        return separator.join(
            [*head[:-1], listed[0] + ", " + separator.join(tail[len(head) - 1 :])]
        )
    shared = 0
    while shared < min(len(head), len(tail)) - 1 and head[shared] == tail[shared]:
        shared += 1
    if head == tail[: len(head)]:
        return second
    return separator.join(head) + ", " + separator.join(tail[shared:])


def _code_lines(lines: list[str], segment: _Segment) -> int:
    return sum(1 for line in lines[segment.start : segment.end] if line.strip())


def _fits(lines: list[str], start: int, end: int, rules: ChunkingPack) -> bool:
    return sum(nbytes(line) + 1 for line in lines[start:end]) - 1 <= rules.max_chunk_bytes
