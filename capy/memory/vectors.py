"""Cosine similarity of two records' texts, when the semantic layer is installed and its model is
on this machine: dedup then also merges a paraphrase the word overlap misses. Never on a hook's
path (learning runs in the drainer and the CLI), never a download; without the layer, None and
dedup is lexical alone."""

from __future__ import annotations

from collections.abc import Callable

Similarity = Callable[[str, str], float]


def text_similarity() -> Similarity | None:
    from capy.semantic.capsules import capsule_embedder

    try:
        lazy = capsule_embedder()
    except Exception:  # a broken semantic install must not stop learning: dedup stays lexical
        return None
    if lazy is None:
        return None
    cache: dict[str, object] = {}

    def vector(text: str):
        if text not in cache:
            cache[text] = lazy.session().vectors([text])[0]
        return cache[text]

    def similarity(first: str, second: str) -> float:
        return float(vector(first) @ vector(second))

    return similarity
