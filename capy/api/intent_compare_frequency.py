"""Superlatives of how often: answered by counting the findings an output repeats.

"Which misspelling is reported most often", "the most common warning", "which check fires most
frequently": no field of the output holds the answer, and no column counts it. The answer is
the message the output prints most times. Each line is read for what it says, with where it
sits left out (a leading `path:12:3:`, a caret marker `^--^` under a source line), so the same
finding at two places is one message, counted twice. The numbers a message states are left out
of what is counted too (flake8's `E501 line too long (88 > 79 characters)` says 88 on one line
and 93 on the next: one message); each message is shown as first printed. The top messages are
shown with their count, most first (least first for "least often"). Asked only when the intent
holds one of the search pack's `intents.compare.frequency` words and no column or message
measure answers it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from capy.api.intent_shape import intent_stems, stems_of

if TYPE_CHECKING:
    from capy.rules.views.intents import Compare

# Where a finding sits, before what it says: carets and rules under a source line, then a
# `path:line[:col]:` location.
_MARKER = re.compile(r"^[\s^~|>-]*")
_LOCATION = re.compile(r"^[^\s:]+:\d+(?::\d+)?:?\s+")
# A message names something: two words of letters at least (`SER ==> SET`, not `|` or `ok`),
# in whatever script it is written (`ошибка файл`).
_WORD = re.compile(r"[^\W\d_]{2,}")
# A number standing alone (`88`, `3.5`), not the digits of a code or name (`E501`, `pkg01`).
_NUMBER = re.compile(r"(?<!\w)\d+")
# A figure a message states (`(88 > 79 characters)`, `expected 4 but found 2`): a number
# standing alone that says no place, as a line or column does (`path:12:5`, `line 39:`,
# `file x.py, line 24`), and is no part of a name, version, date or path (`CWE-703`,
# `4.16.0`, `2026-11-30`, `/703.html`). A line saying only where the next finding is, or
# naming another thing, stays a message of its own.
_FIGURE = re.compile(r"(?<![\w:/.#-])(?<![Ll]ine )\d+(?![\w:/]|[.-]\w)")
_MIN_WORDS = 2


def asks_how_often(intent: str, compare: Compare) -> bool:
    """Whether the intent's superlative is one of frequency ("most often", "most common")."""
    wanted = stems_of(compare.frequency)
    return any(stem in wanted for stem in intent_stems(intent))


def frequency_rows(stored: str, compare: Compare) -> list[tuple[int, str]] | None:
    """(times printed, message) for each message the output prints, in the order first
    printed, or None when no message is printed twice (nothing to rank). Messages that differ
    only in their numbers are one, shown as first printed."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for line in stored.split("\n"):
        message = _message(line)
        if message:
            key = _FIGURE.sub("#", message)
            counts[key] += 1
            first.setdefault(key, message)
    if len(counts) < compare.min_rows or max(counts.values(), default=0) < 2:
        return None
    return [(times, first[key]) for key, times in counts.items()]


def without_numbers(text: str) -> str:
    """The text with each number standing alone masked, so what a message says is compared
    apart from the figures it states (`expected 4 but found 2`, `(88 > 79 characters)`)."""
    return _NUMBER.sub("#", text)


def frequency_section(rows: list[tuple[int, str]], descending: bool, compare: Compare) -> list[str]:
    """Markdown lines: the messages by how many times the output prints them."""
    ranked = sorted(
        enumerate(rows), key=lambda item: (-item[1][0] if descending else item[1][0], item[0])
    )
    top = ranked[: compare.top_rows]
    order = "most first" if descending else "fewest first"
    lines = [
        "",
        f"### Messages by times printed, {order} (top {len(top)} of {len(rows):,}, each "
        "with its times)",
    ]
    return lines + [
        f"{times}× {_clip(message, compare.max_row_bytes)}" for _, (times, message) in top
    ]


def _message(line: str) -> str:
    text = line[_MARKER.match(line).end() :]
    text = text[_LOCATION.match(text).end() :] if _LOCATION.match(text) else text
    text = text.strip()
    return text if len(_WORD.findall(text)) >= _MIN_WORDS else ""


def _clip(line: str, cap: int) -> str:
    data = line.encode("utf-8")
    return line if len(data) <= cap else data[:cap].decode("utf-8", "ignore") + "…"
