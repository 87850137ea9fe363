"""A search hit's chunk with the output's lines on either side of it, for context only.

Chunks cut the output at a size, not at a meaning: a tree node's last children (`pipdeptree`,
`npm ls`), a commit's message under its header, the comments above a YAML key fall just past
the chunk that matched, and the reply could show the chunk's lines only. The hit is looked up
in the output as stored (its content is a verbatim slice of it for text output), and up to the
executor pack's `context_lines_before` and `context_lines_after` lines around it join it, as
far as the block at the chunk's edge goes (`block_continuation`: indented lines, tree
branches); a line of another shape belongs to another record. One blank line followed by a
line that continues the block does not end it (a commit's indented message under its
header). Only the chunk's own lines can anchor an answer (their words are what search
ranked); the lines around it are context.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Surrounded:
    text: str  # the chunk with its surrounding lines
    core: tuple[int, int]  # where the chunk itself sits in `text`, as character offsets
    # The output's line where `text` starts, and where it ends; None when the chunk is not a
    # slice of the output.
    lines: tuple[int, int] | None = None


def surrounded(
    content: str,
    whole: str,
    starts: Sequence[int],
    reach: tuple[int, int],
    continuation: re.Pattern[str],
) -> Surrounded:
    """`content` with up to `reach[0]` lines of `whole` (whose lines begin at `starts`) ahead
    of it while the line below continues a block, and up to `reach[1]` continuing lines
    behind it; `content` alone when it is not a slice of `whole` starting at a line."""
    plain = Surrounded(content, (0, len(content)))
    at = whole.find(content) if content.strip() else -1
    if at < 0:
        return plain
    first = bisect_right(starts, at) - 1
    if starts[first] != at:
        return plain
    last = bisect_right(starts, at + len(content) - 1) - 1
    top = first
    while first - top < reach[0] and top > 0 and continuation.match(_line(whole, starts, top)):
        top -= 1
    bottom = last
    while bottom - last < reach[1] and bottom + 1 < len(starts):
        if continuation.match(_line(whole, starts, bottom + 1)):
            bottom += 1
        elif _blank_then_continued(whole, starts, bottom + 1, continuation):
            bottom += 2
        else:
            break
    if top == first and bottom == last:
        return Surrounded(content, plain.core, (first, last))
    end = max(at + len(content), _line_end(whole, starts, bottom))
    offset = at - starts[top]
    return Surrounded(whole[starts[top] : end], (offset, offset + len(content)), (top, bottom))


def _blank_then_continued(
    text: str, starts: Sequence[int], number: int, continuation: re.Pattern[str]
) -> bool:
    """Whether line `number` is blank and the line after it continues the block: a commit's
    indented message sits one blank line below its `Date:` header."""
    return (
        number + 1 < len(starts)
        and not _line(text, starts, number).strip()
        and continuation.match(_line(text, starts, number + 1)) is not None
    )


def _line(text: str, starts: Sequence[int], number: int) -> str:
    return text[starts[number] : _line_end(text, starts, number)]


def _line_end(text: str, starts: Sequence[int], number: int) -> int:
    return starts[number + 1] - 1 if number + 1 < len(starts) else len(text)
