"""The reply budget follows relevance: fewer, better sections.

Search ranks up to `max_sections` chunks for an intent, and the reply shared its budget among
all of them, so four sections that hold only the intent's common words could push the one
strong section's answer line out. Each hit is scored with the relevance floor's measure (the
rarity-weighted share of the intent's terms it holds); hits below the executor pack's
`section_share_of_best` of the best one show no lines, so the budget goes to the others.
They still count when the intent's words are weighed by rarity among the hits, so a word the
strong hits share keeps its weight.
"""

from __future__ import annotations

from collections.abc import Sequence


def shown_hits(relevances: Sequence[float], share: float) -> list[bool]:
    """Which hits may show lines: those scoring at least `share` of the best hit's relevance
    (all of them when `share` is 0 or no hit holds any word)."""
    best = max(relevances, default=0.0)
    if share <= 0 or best <= 0:
        return [True] * len(relevances)
    return [score >= share * best for score in relevances]
