"""Reciprocal Rank Fusion of ranked candidate lists (porter, trigram, later vectors).

score(d) = sum over the lists that hold d of 1 / (k + rank), ranks from 1 (Cormack, Clarke and
Buettcher, SIGIR 2009). It needs no score calibration between lists, which is the point: a bm25
value from the porter table and one from the trigram table are not comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from capy.retrieval.model import Candidate

BOTH_LISTS = "rrf"


@dataclass
class Fused:
    """A candidate, its fused score and the lists that found it."""

    candidate: Candidate
    score: float
    lists: list[str] = field(default_factory=list)  # names of the lists that found it

    @property
    def layer(self) -> str:
        """The list that found it, or "rrf" when more than one did."""
        return self.lists[0] if len(self.lists) == 1 else BOTH_LISTS


def reciprocal_rank_fusion(lists: Mapping[str, Sequence[Candidate]], k: int) -> list[Fused]:
    """Fuse ranked lists by chunk id; best first, ties kept in first-seen order."""
    fused: dict[int, Fused] = {}
    for name, candidates in lists.items():
        seen: set[int] = set()
        for rank, candidate in enumerate(candidates, start=1):
            if candidate.chunk_id in seen:
                continue  # a list naming a chunk twice counts it once, at its best rank
            seen.add(candidate.chunk_id)
            entry = fused.setdefault(candidate.chunk_id, Fused(candidate, 0.0))
            entry.score += 1.0 / (k + rank)
            entry.lists.append(name)
    return sorted(fused.values(), key=lambda entry: -entry.score)
