"""The vector list's search over a database's vectors (the knowledge base's chunks, the vault's
messages): the current model's vectors are held in memory per database file, read again when
`vector_generation` moves (triggers bump it on every vector change), and nothing is written
anywhere, so nothing is unencrypted at rest.

Up to the search pack's `exact_max_vectors` the answer is one float32 matrix-vector product:
exact. Past it, up to `approximate_max_vectors`, the sign prefilter (capy.semantic.
sign_prefilter) scores only the rows whose signs are nearest the query's. Past that the list is
left out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capy.semantic.knowledge import KNOWLEDGE, Layout, pieces_for, vector_count

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.rules.views.search import Vectors
    from capy.rules.views.semantic import EmbeddingModel
    from capy.store import Store


@dataclass
class _Matrix:
    generation: str | None = None
    sizes: tuple[int, int] = (0, 0)  # the pack's exact and approximate sizes it was read for
    count: int = 0  # the version's vectors at `generation`
    chunk_ids: Any = None  # np.ndarray of int64, ascending (a chunk's pieces are one run)
    source_ids: Any = None
    vectors: Any = None  # np.ndarray float32 (n, dims), searched exactly
    index: Any = None  # instead, past the exact-search size: a sign_prefilter.SignIndex
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def rows(self) -> int:
        held = self.index if self.index is not None else self.vectors
        return 0 if held is None else len(held)


_matrices: dict[tuple[str, str], _Matrix] = {}


def _generation(conn: Any) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'vector_generation'").fetchone()
    return row[0] if row else "0"


def matrix(
    store: Store,
    model: EmbeddingModel,
    version: str,
    settings: Vectors,
    layout: Layout = KNOWLEDGE,
) -> _Matrix:
    """The current version's vectors of this database, read again when they changed: float32
    rows up to the exact size, the sign index past it, nothing past the approximate size. The
    count is read once per generation (a sum over every embedded source)."""
    import numpy as np

    from capy.semantic import sign_prefilter
    from capy.semantic.embedder import decode

    key = (f"{store.path}:{layout.vectors}", version)
    cached = _matrices.setdefault(key, _Matrix())
    generation = _generation(store.conn)
    with cached.lock:
        sizes = (settings.exact_max_vectors, settings.approximate_max_vectors)
        if cached.generation == generation and cached.sizes == sizes:
            return cached
        cached.vectors = cached.index = None  # the old matrix goes before the new one comes
        cached.chunk_ids = cached.source_ids = None
        cached.count = vector_count(store.conn, version, layout)
        approximate = cached.count > settings.exact_max_vectors
        if cached.count and (not approximate or cached.count <= settings.approximate_max_vectors):
            rows = store.conn.execute(
                f"SELECT chunk_id, source_id, vector FROM {layout.vectors} WHERE model = ? "
                "ORDER BY chunk_id, part",
                (version,),
            ).fetchall()
            cached.chunk_ids = np.array([row[0] for row in rows], dtype=np.int64)
            cached.source_ids = np.array([row[1] for row in rows], dtype=np.int64)
            vectors = decode([row[2] for row in rows], model.dimensions)
            del rows
            if approximate:
                cached.index = sign_prefilter.build(vectors)
            else:
                cached.vectors = vectors.astype(np.float32)
        cached.generation, cached.sizes = generation, sizes
        return cached


def nearest_in_store(
    store: Store,
    rules: RuleSet,
    query: str,
    limit: int,
    allowed_sources: Callable[[], Sequence[int]] | None,
    layout: Layout = KNOWLEDGE,
) -> list[tuple[int, float]]:
    """(chunk id, -cosine) of the `limit` nearest chunks, best first (lower is better, as
    bm25); [] when there are no vectors, more than the search pack allows, or nothing in
    scope. `allowed_sources` (None: every source) is asked only when vectors are searched.
    Raises SemanticError when the model is missing or altered."""
    import numpy as np

    from capy.semantic import query_vectors

    semantic = rules.view("semantic")
    settings = rules.view("search").vectors
    chosen = pieces_for(rules)
    if chosen is None:
        return []
    model, pieces = chosen
    found = matrix(store, model, pieces.version, settings, layout)
    if found.rows == 0:
        return []
    query_vector = query_vectors.vector(model, semantic.embedding.threads, query)
    allowed = None if allowed_sources is None else _in_scope(found.source_ids, allowed_sources())
    if found.index is None:
        chunk_ids, scores = found.chunk_ids, found.vectors @ query_vector
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
    else:
        kept = max(settings.depth, round(found.rows * settings.approximate_rescore_share))
        kept_rows, scores = found.index.scores(query_vector, kept, allowed)
        chunk_ids = found.chunk_ids[kept_rows]
    if len(scores) == 0:
        return []
    # A chunk scores as its best piece: rows are ordered by chunk, so each chunk's pieces
    # are one run, reduced by maximum.
    starts = np.flatnonzero(np.r_[True, chunk_ids[1:] != chunk_ids[:-1]])
    best = np.maximum.reduceat(scores, starts)
    ids = chunk_ids[starts]
    limit = min(limit, len(best))
    top = np.argpartition(-best, limit - 1)[:limit]
    top = top[np.argsort(-best[top], kind="stable")]
    return [
        (int(ids[i]), -float(best[i]))
        for i in top
        if np.isfinite(best[i]) and best[i] >= settings.min_similarity
    ]


def _in_scope(source_ids: Any, allowed: Sequence[int]) -> Any:
    """Which rows belong to an allowed source (None: every row does). Source ids are small
    integers: a lookup table is one gather, where `np.isin` sorts every row."""
    import numpy as np

    table = np.zeros(int(source_ids.max(initial=0)) + 1, dtype=bool)
    chosen = np.fromiter(allowed, dtype=np.int64)
    table[chosen[(chosen >= 0) & (chosen < len(table))]] = True
    mask = table[source_ids]
    return None if mask.all() else mask
