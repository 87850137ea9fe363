"""Vectors of recent queries, kept in memory (an agent often asks again, and a search over
several corpora embeds the same query for each); nothing is written anywhere.

Embedding the query before the lexical lists ran, in a thread, was measured and dropped: the
gate leaves the vector list out of most searches, and on a busy machine the wasted model run
slowed every search (p50 11 -> 40 ms at 3,000 chunks), not only those that need it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

_KEEP = 64  # recent query vectors kept per process
_recent: OrderedDict[tuple[str, str], Any] = OrderedDict()
_lock = threading.Lock()


def vector(model: Any, threads: int, query: str) -> Any:
    """The query's vector (float32, unit length); raises what the model raised."""
    from capy.semantic.embedder import shared_embedder

    key = (model.model_id, query)
    with _lock:
        if key in _recent:
            _recent.move_to_end(key)
            return _recent[key]
    found = shared_embedder(model, threads).vectors([query])[0]
    with _lock:
        _recent[key] = found
        while len(_recent) > _KEEP:
            _recent.popitem(last=False)
    return found


def forget() -> None:
    """Drop the recent vectors (benchmarks: every timed search embeds its query)."""
    with _lock:
        _recent.clear()
