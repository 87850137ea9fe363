"""How much each query word weighs when an intent reply picks the lines to show.

A word weighs by two smoothed rarities multiplied: among the search hits, log((hits + 1) /
(hits holding it + 0.5)), which tells the sections apart, and over the whole output's lines,
log((lines + 1) / (lines holding it + 0.5)), which tells a telling word from one the output
is full of. The old weight, log(hits / hits holding it), was exactly zero for a word every
hit holds, and on a small result set that is every word: then whatever else matched decided
which lines were shown, down to a substring inside an unrelated word. Smoothed, such a word
still weighs a little, and the lines holding the most of the query's words as whole words win.

A match is a whole word when it starts and ends at word boundaries; a term the words never
hold is found as a substring instead (`roll` inside `scrollable`), and such a match weighs the
executor pack's `line_weights.substring_factor` of a whole-word one; a whole word that meets
the term only through its stem (`chunk` for `chunked`) weighs `stem_factor` of one spelled as
asked, so the line naming the very word wins a tie with lines naming its relatives.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval.matching import Span, TermPattern

# A letter or digit: what the matcher keeps in a word (`_` and punctuation separate words).
_WORD_CHAR = re.compile(r"[^\W_]")


def line_term_weights(
    held_by_hits: Sequence[int],
    hits: int,
    text: str,
    starts: Sequence[int],
    patterns: tuple[TermPattern, ...],
) -> list[float]:
    """Each pattern's weight: its smoothed rarity among `hits` (`held_by_hits`: how many hold
    it) times its smoothed rarity over the lines of `text` (`starts`: where each line begins)."""
    over_lines = output_term_weights(text, starts, patterns)
    return [
        _smoothed_rarity(held, hits) * rarity
        for held, rarity in zip(held_by_hits, over_lines, strict=True)
    ]


def output_term_weights(
    text: str, starts: Sequence[int], patterns: tuple[TermPattern, ...]
) -> list[float]:
    """Each pattern's smoothed rarity over the lines of `text`. A term the output never holds
    weighs most, as in `intent_relevance`."""
    from capy.retrieval.matching import term_spans

    return [
        _smoothed_rarity(len({bisect_right(starts, start) - 1 for start, _ in spans}), len(starts))
        for spans in term_spans(text, patterns)
    ]


def _smoothed_rarity(holding: int, total: int) -> float:
    """log((total + 1) / (holding + 0.5)): above zero even when every unit holds the term."""
    return math.log((total + 1) / (holding + 0.5))


def whole_word(text: str, span: Span) -> bool:
    """Whether `span` of `text` starts and ends at word boundaries."""
    start, end = span
    before = start > 0 and _WORD_CHAR.match(text, start - 1) is not None
    after = end < len(text) and _WORD_CHAR.match(text, end) is not None
    return not before and not after


def match_weight(
    text: str,
    span: Span,
    weight: float,
    substring_factor: float,
    *,
    spelled: tuple[str, ...] = (),
    stem_factor: float = 1.0,
) -> float:
    """What one match of a term of `weight` adds: all of it for a whole word spelled as one of
    `spelled` (the term's own lowercase forms; any whole word when none are given), a
    `stem_factor` share for a whole word that meets it through its stem, a `substring_factor`
    share for a match inside another word."""
    if not whole_word(text, span):
        return weight * substring_factor
    if spelled and text[span[0] : span[1]].lower() not in spelled:
        return weight * stem_factor
    return weight


def phrase_bonus(
    starts: Sequence[int],
    spans: Sequence[Sequence[Span]],
    by_line: dict[int, dict[int, float]],
    factor: float,
) -> dict[int, float]:
    """Line -> for each pair of terms next to each other in the query that the line holds next
    to each other too (one separator apart: `business_type` for "business types"), the
    lighter one's weight times `factor` (`by_line`: line -> term -> its weight there): the
    words as the question joins them name one thing. `spans`: each term's matches in the
    text whose lines begin at `starts`."""
    bonus: dict[int, float] = {}
    if not factor:
        return bonus
    ends = [{end: bisect_right(starts, start) - 1 for start, end in term} for term in spans]
    for term in range(len(spans) - 1):
        for start, _ in spans[term + 1]:
            line = bisect_right(starts, start) - 1
            for end in (start - 1, start):
                if ends[term].get(end) != line:
                    continue
                held = by_line.get(line, {})
                pair = factor * min(held.get(term, 0.0), held.get(term + 1, 0.0))
                bonus[line] = max(bonus.get(line, 0.0), pair)
    return bonus
