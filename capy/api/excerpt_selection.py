"""Lines chosen from several excerpts of a long output within one byte budget (the selection
step of `capy.api.output_excerpts`): the best anchors first, wherever they sit, then a block
under an anchor that opens one, then the lines around the anchors, nearest first, while room is
left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.api.output_excerpts import Excerpt
    from capy.rules.views.executor import IntentReply

GAP = "…"
# Lines this short ("}", "],", "---") are structure, not content: they may repeat.
_SHORT_LINE = 8


class Selection:
    """Lines chosen from several excerpts within one byte budget: the best anchors first
    (wherever they sit), then the lines around them, nearest first, while room is left; each
    excerpt within `cap` (`max_section_bytes` by default); lines the reply already holds are
    skipped."""

    def __init__(
        self,
        excerpts: list[Excerpt],
        room: int,
        seen: set[str],
        budget: IntentReply,
        *,
        titles: Sequence[str] | None = None,
        cap: int | None = None,
    ) -> None:
        self.excerpts = excerpts
        self.room = room
        self.seen = seen
        self.budget = budget
        self.cap = budget.max_section_bytes if cap is None else cap  # per excerpt
        self.comment = re.compile(budget.comment_line) if budget.comment_line else None
        self.continuation = (
            re.compile(budget.block_continuation) if budget.block_continuation else None
        )
        self.taken: list[set[int]] = [set() for _ in excerpts]
        self.used = [0] * len(excerpts)
        # A section costs its heading once it shows anything.
        self.heading = (
            [utf8_size(one_line(t)) + 6 for t in titles] if titles else [0] * len(excerpts)
        )

    def bodies(self, anchors: list[tuple[float, int, int]]) -> list[str]:
        chosen = []
        ranked = sorted(anchors, key=lambda a: (-a[0], a[1], a[2]))
        for rank, (_score, index, line) in enumerate(ranked):
            # An answer deep in a record says which record it is in; the same line in a
            # record not shown yet (`sha1WithRSAEncryption` of a second certificate) is
            # another answer, not a repeat.
            excerpt = self.excerpts[index]
            named = excerpt.identity.get(line)
            other = named is not None and excerpt.lines[named].strip() not in self.seen
            if self._take(index, line, again=other):
                chosen.append((index, line))
                if named is not None:
                    self._take(index, named)
                if rank == 0:  # the best line's block before weaker lines take the room
                    self._block(index, line)
        for index, anchor in chosen:
            self._block(index, anchor)
        for distance in range(
            1, max(self.budget.context_lines_before, self.budget.context_lines_after) + 1
        ):
            for index, anchor in chosen:
                for line in self._around(index, anchor, distance):
                    self._take(index, line)
        # Last, with the room the anchors' context left: a heading printed again over another
        # message (a repeat, so no anchor above) with the message under it.
        for _score, index, line in ranked:
            self._heading_again(index, line)
        for excerpt, taken in zip(self.excerpts, self.taken, strict=True):
            self.seen.update(excerpt.lines[n].strip() for n in taken)
        return [
            excerpt.join(sorted(taken))
            for excerpt, taken in zip(self.excerpts, self.taken, strict=True)
        ]

    def _heading_again(self, index: int, line: int) -> None:
        """Show `line` again, with the indented line under it, when the reply holds the line
        but not the one under it, and both fit. A checker that prints a finding's place over
        each of its messages (pydocstyle's `patches.py:52 in public function `resolve_path`:`
        above each of four messages) repeats the heading word for word: the copy over a
        message not shown is that message's heading, and the message is another answer to a
        question about the place."""
        excerpt = self.excerpts[index]
        lines, taken = excerpt.lines, self.taken[index]
        if self.continuation is None or line + 1 >= len(lines) or line in taken:
            return
        below = lines[line + 1]
        if (
            lines[line].strip() not in self.seen
            or self.continuation.match(below) is None
            or _indent(below) <= _indent(lines[line])
            or below.strip() in self.seen
        ):
            return
        cost = sum(utf8_size(excerpt.clip(n)) + 1 + len(GAP) for n in (line, line + 1))
        cost += 0 if taken else self.heading[index]
        if cost <= self.room and self.used[index] + cost <= self.cap:
            self._take(index, line, again=True)
            self._take(index, line + 1)

    def _block(self, index: int, anchor: int) -> None:
        """An anchor that opens a block (a tree node, a heading over indented lines) shows
        the block under it, up to the pack's `block_lines_after` lines, before any other
        context: a node's children are what a question about it asks for.
        An indented anchor (a key inside a YAML spec or a pretty-printed JSON document, where
        every line is indented) opens the lines indented deeper than it: `business_type:`
        over its `enum:` values."""
        excerpt = self.excerpts[index]
        block, lines = excerpt.block, excerpt.lines
        if block is None:
            return
        anchor = self._past_comment(index, anchor)
        nested = block.match(lines[anchor]) is not None
        depth = _indent(lines[anchor])
        for line in range(anchor + 1, min(len(lines), anchor + 1 + self.budget.block_lines_after)):
            below = _indent(lines[line]) > depth if nested else block.match(lines[line])
            if (
                not lines[line].strip()
                or not below
                or (not self._take(index, line) and line not in self.taken[index])
            ):
                return

    def _past_comment(self, index: int, anchor: int) -> int:
        """For an anchor that is a comment (the pack's `comment_line`), the line the comment
        is about: the first line after its run of comment lines at the same indent, taken
        with them; a comment above a key (`# The type of command to generate`) describes the
        key, and the key's block is the answer. Any other anchor is its own line."""
        lines, comment = self.excerpts[index].lines, self.comment
        if comment is None or not comment.match(lines[anchor]):
            return anchor
        depth = _indent(lines[anchor])
        # A comment longer than the context the reply shows after a line is prose, not a note.
        end = min(len(lines), anchor + 1 + self.budget.context_lines_after)
        line = anchor + 1
        while line < end and comment.match(lines[line]) and _indent(lines[line]) == depth:
            line += 1
        if line >= end or not lines[line].strip() or _indent(lines[line]) != depth:
            return anchor
        for shown in range(anchor + 1, line + 1):
            if not self._take(index, shown) and shown not in self.taken[index]:
                return anchor
        return line

    def _around(self, index: int, anchor: int, distance: int) -> list[int]:
        """The lines `distance` away from `anchor`, after it first (an error's detail, assert
        values and stack frames, follow it), within the pack's context limits."""
        after = [anchor + distance] if distance <= self.budget.context_lines_after else []
        before = [anchor - distance] if distance <= self.budget.context_lines_before else []
        return [n for n in after + before if 0 <= n < len(self.excerpts[index].lines)]

    def _take(self, index: int, line: int, *, again: bool = False) -> bool:
        """Add `line` of excerpt `index` if it is new (or shown `again` elsewhere), not blank
        and fits."""
        excerpt, taken = self.excerpts[index], self.taken[index]
        text = excerpt.lines[line].strip()
        repeat = len(text) > _SHORT_LINE and text in self.seen and not again
        if line in taken or not text or repeat:
            return False
        cost = utf8_size(excerpt.clip(line)) + 1 + len(GAP) + (0 if taken else self.heading[index])
        if cost > self.room or self.used[index] + cost > self.cap:
            return False
        taken.add(line)
        # Overlapping chunks hold the same lines: one shown line is not shown again.
        self.seen.add(text)
        self.used[index] += cost
        self.room -= cost
        return True


def _indent(text: str) -> int:
    """Columns of leading blanks (a tab counts as one: outputs indent consistently)."""
    return len(text) - len(text.lstrip(" \t"))


def section_title(title: str, label: str) -> str:
    """A chunk of a command's output is titled `<label> (lines 41-60)`; the reply's header
    names the label once, so each section shows `lines 41-60` (every section repeated the
    label, about 30 bytes each, in every reply)."""
    if label and title.startswith(f"{label} (") and title.endswith(")"):
        return title[len(label) + 2 : -1]
    return title


def one_line(text: str) -> str:
    return " ".join(text.split())


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))
