"""Per-source diversification: one long log must not fill every result slot."""

from __future__ import annotations

from collections.abc import Callable, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs a warm search more than this whole module
    from typing import TypeVar

    T = TypeVar("T")


def diversify(items: Sequence[T], source_of: Callable[[T], int], max_per_source: int) -> list[T]:
    """Items in rank order, at most `max_per_source` from each source before any source gets
    more; the items held back follow, still in rank order."""
    if max_per_source < 1:
        return list(items)
    taken: dict[int, int] = {}
    first, rest = [], []
    for item in items:
        source = source_of(item)
        if taken.get(source, 0) < max_per_source:
            taken[source] = taken.get(source, 0) + 1
            first.append(item)
        else:
            rest.append(item)
    return first + rest
