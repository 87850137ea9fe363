"""Smart snippets: the parts of a chunk around its matches, bounded in size.

A window of `window_bytes` on each side of every match; windows closer than
`merge_distance_bytes` merge into one; windows holding the most distinct query terms go in
first until `max_bytes`; edges move to a line or word boundary within `boundary_slack_bytes`;
gaps are shown with the pack's ellipsis. A chunk smaller than `whole_chunk_below_bytes` is
returned whole: cutting it would save little and lose context. Offsets are characters; the
byte limits are enforced on the UTF-8 result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capy.retrieval.matching import Span
from capy.rules.views.search import Snippets


@dataclass
class _Window:
    """A stretch of content a snippet may show, and the matches in it."""

    start: int
    end: int
    terms: set[int] = field(default_factory=set)
    matches: int = 0


def make_snippet(content: str, per_term: list[list[Span]], rules: Snippets) -> str:
    """A snippet of `content` around the spans in `per_term` (one list per query term)."""
    if _size(content) <= rules.whole_chunk_below_bytes:
        return content
    windows = _merged_windows(content, per_term, rules)
    if not windows:
        return _cap(content[: rules.window_bytes * 2].rstrip() + rules.ellipsis, rules)
    chosen = _best_first(windows, rules)
    return _cap(_join(content, chosen, rules), rules)


def _merged_windows(content: str, per_term: list[list[Span]], rules: Snippets) -> list[_Window]:
    spans = sorted(
        (start, end, term) for term, spans in enumerate(per_term) for start, end in spans
    )
    merged: list[_Window] = []
    for start, end, term in spans:
        low = max(0, start - rules.window_bytes)
        high = min(len(content), end + rules.window_bytes)
        if merged and low - merged[-1].end <= rules.merge_distance_bytes:
            merged[-1].end = max(merged[-1].end, high)
        else:
            merged.append(_Window(low, high))
        merged[-1].terms.add(term)
        merged[-1].matches += 1
    return merged


def _best_first(windows: list[_Window], rules: Snippets) -> list[_Window]:
    ranked = sorted(windows, key=lambda w: (-len(w.terms), -w.matches, w.start))
    budget = rules.max_bytes
    chosen: list[_Window] = []
    for window in ranked:
        cost = (window.end - window.start) + len(rules.ellipsis)
        if chosen and cost > budget:
            continue
        chosen.append(window)
        budget -= cost
    return sorted(chosen, key=lambda w: w.start)


def _join(content: str, windows: list[_Window], rules: Snippets) -> str:
    pieces = []
    for window in windows:
        start = _boundary(content, window.start, rules.boundary_slack_bytes, forward=False)
        end = _boundary(content, window.end, rules.boundary_slack_bytes, forward=True)
        pieces.append((start, end))
    text = ""
    previous_end = 0
    for start, end in pieces:
        start = max(start, previous_end)
        if start >= end:
            continue
        text += rules.ellipsis if start > previous_end else ""
        text += content[start:end].strip("\n")
        previous_end = end
    if previous_end < len(content):
        text += rules.ellipsis
    return text


def _boundary(content: str, position: int, slack: int, *, forward: bool) -> int:
    """The nearest line break (else space) within `slack` of `position`, else `position`."""
    if position <= 0 or position >= len(content):
        return max(0, min(position, len(content)))
    low, high = max(0, position - slack), min(len(content), position + slack)
    for separator in ("\n", " "):
        candidates = [
            index + (1 if not forward else 0)
            for index in _all_indexes(content, separator, low, high)
        ]
        if candidates:
            return min(candidates, key=lambda index: abs(index - position))
    return position


def _all_indexes(text: str, needle: str, low: int, high: int) -> list[int]:
    found, index = [], text.find(needle, low, high)
    while index != -1:
        found.append(index)
        index = text.find(needle, index + 1, high)
    return found


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cap(snippet: str, rules: Snippets) -> str:
    """Enforce max_bytes on the UTF-8 form, never cutting a character in half."""
    if _size(snippet) <= rules.max_bytes:
        return snippet
    room = rules.max_bytes - _size(rules.ellipsis)
    clipped = snippet.encode("utf-8", "surrogatepass")[: max(room, 0)]
    return clipped.decode("utf-8", "ignore") + rules.ellipsis
