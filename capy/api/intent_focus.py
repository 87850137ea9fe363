"""The reply budget follows relevance: fewer, better sections.

Search ranks up to `max_sections` chunks for an intent, and the reply shared its budget among
all of them, so four sections that hold only the intent's common words could push the one
strong section's answer line out. Each hit is scored with the relevance floor's measure (the
rarity-weighted share of the intent's terms it holds); hits below the executor pack's
`section_share_of_best` of the best one show no lines (unless they hold a word no stronger
hit holds), so the budget goes to the others.
They still count when the intent's words are weighed by rarity among the hits, so a word the
strong hits share keeps its weight.
"""

from __future__ import annotations

from collections.abc import Sequence


def shown_hits(shares: Sequence[Sequence[float]], least: float) -> list[bool]:
    """Which hits may show lines, from each hit's per-term relevance shares (in rank order):
    those scoring at least `least` of the best hit's relevance, and a weaker one that holds a
    term none of the hits shown so far holds (the second half of "killed for memory, or disk
    errors"). All of them when `least` is 0 or no hit holds any word."""
    scores = [sum(row) for row in shares]
    best = max(scores, default=0.0)
    if least <= 0 or best <= 0:
        return [True] * len(shares)
    shown = [score >= least * best for score in scores]
    covered = {
        t for row, on in zip(shares, shown, strict=True) if on for t, w in enumerate(row) if w
    }
    for index, row in enumerate(shares):
        new = {term for term, weight in enumerate(row) if weight > 0} - covered
        if not shown[index] and new:
            shown[index] = True
            covered |= new
    return shown
