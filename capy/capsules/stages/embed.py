"""The embed stage: a seam the semantic layer fills in. Without an embedder it writes nothing
and its jobs finish at once, so the pipeline runs the same with or without `capy[semantic]`.

An embedder is found by importing `capy.semantic.capsules` and calling its
`capsule_embedder()` (None when no model is installed). Its `model_id` joins the stage's
derivation version, so installing or changing the model marks older vectors stale.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

from capy.capsules.model import Capsule
from capy.capsules.sqlite.vectors import (
    chunk_texts,
    clear_vectors,
    session_neighbours,
    write_vectors,
)
from capy.capsules.stages import StageContext

PROVIDER_MODULE = "capy.semantic.capsules"


class Embedder(Protocol):
    model_id: str
    dims: int

    def embed(self, texts: Sequence[str]) -> Sequence[bytes]: ...


def find_embedder() -> Embedder | None:
    try:
        provider = importlib.import_module(PROVIDER_MODULE)
    except ImportError:
        return None
    factory = getattr(provider, "capsule_embedder", None)
    return None if factory is None else factory()


def embed_texts(context: StageContext, n: int) -> list[tuple[int, str]]:
    """Capsule `n`'s chunks as the model reads them: each led by the capsules of its session
    just before it and followed by those just after, as many and as long as the semantic
    pack's `capsule_context` says, so that a short turn ("Yes, I did!") carries what it
    answers. The chunks themselves (what recall shows and counts) stay the capsule's own."""
    pairs = chunk_texts(context.conn, n)
    rule = context.rules.view("semantic").embedding.capsule_context
    if rule is None or not pairs:
        return pairs
    earlier, later = session_neighbours(context.conn, n, rule.before, rule.after)
    head = [text[: rule.chars] for text in earlier]
    tail = [text[: rule.chars] for text in later]
    return [(ordinal, "\n".join([*head, text, *tail])) for ordinal, text in pairs]


Prepared = tuple[list[tuple[int, str]], list[bytes]]  # a capsule's chunk texts and vectors


def prepare(context: StageContext, items: Sequence[tuple[int, Capsule]]) -> dict[int, Prepared]:
    """The vectors of a claim's capsules, in one call to the model and outside the write lock
    (the worker calls this first); `run` uses them when the chunks are still the same."""
    embedder: Embedder | None = context.embedder
    if embedder is None:
        return {}
    texts = {n: embed_texts(context, n) for n, capsule in items if not capsule.forgotten}
    flat = [text for pairs in texts.values() for _, text in pairs]
    vectors = iter(list(embedder.embed(flat)) if flat else [])
    return {n: (pairs, [next(vectors) for _ in pairs]) for n, pairs in texts.items()}


def run(context: StageContext, n: int, capsule: Capsule, prepared: Prepared | None = None) -> int:
    """Replace capsule `n`'s vectors (none without an embedder); the number written."""
    embedder: Embedder | None = context.embedder
    if embedder is None:
        return 0
    clear_vectors(context.conn, n, embedder.model_id)
    if capsule.forgotten:
        return 0
    texts = embed_texts(context, n)
    if prepared is not None and prepared[0] == texts:
        vectors = prepared[1]
    else:
        vectors = list(embedder.embed([text for _, text in texts])) if texts else []
    write_vectors(
        context.conn,
        n,
        [(ordinal, vector) for (ordinal, _), vector in zip(texts, vectors, strict=True)],
        embedder.model_id,
        embedder.dims,
        context.version,
    )
    return len(vectors)
