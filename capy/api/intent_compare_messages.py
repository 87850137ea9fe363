"""Superlatives over findings whose measure sits inside their message.

A linter or checker states what it measured in words: `PLR0913 Too many arguments in function
definition (16 > 5)`, `Arrow function has a complexity of 84`. No table or record holds that
field, so "which function takes the most arguments" finds no column to sort. Here the lines
that name the field (an intent word or its alias group, stems compared as for columns) with a
number at most `message_gap_chars` after it become the rows, that number their value; each
shows with the line naming its file above it (the pack's `message_heading`, for indented
findings) and the line saying where it is right after it (`message_location`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from capy.api.intent_compare import _Ask, _meets, _Table
from capy.api.intent_shape import intent_stems

if TYPE_CHECKING:
    from capy.rules.views.intents import Compare

_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
_NUMBER_AFTER = r"[^\d\n/\\.]{{0,{gap}}}?(?<![\w.])(\d[\d,]*(?:\.\d+)?)\b"
# A word followed by one of these is part of a path (`test/test_api.py:3`).
_PART_OF_NAME = frozenset("/\\")


def message_table(stored: str, ask: _Ask, compare: Compare) -> _Table | None:
    """The findings naming the field the intent asks about, as a one-column table, or None
    when no name of the intent is followed by numbers in enough lines."""
    lines = stored.split("\n")
    after = re.compile(_NUMBER_AFTER.format(gap=compare.message_gap_chars))
    for group in ask.nearest:
        # Only lines holding a word that could meet the group are read word by word: a cheap
        # scan first, so a long output costs one regex pass per name, not a stem per word.
        near = re.compile(
            r"\b(?:" + "|".join(re.escape(stem[:4]) for stem in group) + ")", re.IGNORECASE
        )
        valued = [
            (number, value)
            for number, line in enumerate(lines)
            if (value := _value_after(line, group, near, after)) is not None
        ]
        if len(valued) >= compare.min_rows:
            return _table(lines, valued, group, compare)
    return None


def _value_after(
    line: str, group: frozenset[str], near: re.Pattern[str], after: re.Pattern[str]
) -> str | None:
    """The number right after the first word of `line` that names the group. A word inside a
    path names a file, not a measure, and a number past a path separator or a dot
    (`test/test_output.py:6`) is where a finding sits: neither is read as a value."""
    for start in near.finditer(line):
        word = _WORD.match(line, start.start())
        if word and line[word.end() : word.end() + 1] in _PART_OF_NAME:
            continue
        if word and _meets(_stem(word.group()), group):
            found = after.match(line, word.end())
            if found:
                return found.group(1)
    return None


@lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    return intent_stems(word)[0]


def _table(
    lines: list[str], valued: list[tuple[int, str]], group: frozenset[str], compare: Compare
) -> _Table:
    heading = re.compile(compare.message_heading) if compare.message_heading else None
    location = re.compile(compare.message_location) if compare.message_location else None
    # One pass for the heading above each line, not a walk up from every row.
    above: list[str | None] = []
    last: str | None = None
    for line in lines:
        above.append(last)
        if heading is not None and heading.match(line):
            last = line.rstrip()
    table = _Table("", [min(group, key=len)])
    for number, value in valued:
        shown = [lines[number].rstrip()]
        if lines[number][:1].isspace() and above[number] is not None:
            shown.insert(0, above[number])
        if location is not None and number + 1 < len(lines) and location.match(lines[number + 1]):
            shown.append(lines[number + 1].rstrip())
        table.rows.append(("\n".join(shown), [value]))
    return table
