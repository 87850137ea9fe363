"""The capsule pipeline's embedder (see capy.capsules.stages.embed): the embed stage finds it
here. None without the extra or the model, so the stage writes nothing and the pipeline runs as
without the layer; the model itself loads on the first capsule that has chunks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class LazyEmbedder:
    def __init__(self, model: Any, threads: int, version: str) -> None:
        self._model = model
        self._threads = threads
        # The stage's derivation version and the vectors' model column: a model change (or a
        # change of how chunks are embedded) marks older capsule vectors stale.
        self.model_id = version
        self.dims = model.dimensions

    def embed(self, texts: Sequence[str]) -> Sequence[bytes]:
        return self.session().embed(texts)

    def session(self) -> Any:
        """The process's ONNX session for the model (loaded on first use)."""
        from capy.semantic.embedder import shared_embedder

        return shared_embedder(self._model, self._threads)


def _model_and_rules(rules: Any = None) -> tuple[Any, Any] | None:
    from capy.rules import load_rules
    from capy.semantic.service import doctor_line

    rules = load_rules() if rules is None else rules
    if not doctor_line(rules)[0]:
        return None
    return rules, rules.view("semantic").model()


def capsule_embedder() -> LazyEmbedder | None:
    found = _model_and_rules()
    if found is None:
        return None
    rules, model = found
    pack = rules.view("semantic")
    return LazyEmbedder(model, pack.embedding.threads, pack.capsule_vector_version(model))


class CapsuleVectors:
    """Recall's vector list (see capy.capsules.recall.lists.VectorSearch): the capsules whose
    chunks are nearest the query, over the current model's vectors in the encrypted capsule
    log (float16 there, float32 in memory, `capy.semantic.capsule_matrix`): every vector
    scored, or past the pack's `exact_rows` a sign-bit shortlist of them."""

    def __init__(
        self,
        model: Any,
        threads: int,
        version: str,
        min_similarity: float,
        bounds: tuple[int, int] = (0, 0),
        min_similarity_alone: float | None = None,
    ) -> None:
        self._model = model
        self._threads = threads
        self.model_id = version
        self._min_similarity = min_similarity
        # The cosine a capsule needs when no word search matched the query (None: the list's
        # own floor); `alone` applies it to the last list `nearest` returned.
        self._min_similarity_alone = min_similarity_alone
        self._cosines: dict[int, float] = {}  # of the last list `nearest` returned
        # (exact rows, shortlist rows): past the first, only the second are scored exactly.
        self._exact_rows, self._shortlist_rows = bounds
        self._pool: Any = None  # one worker thread, made on the first `start`
        self._pending: tuple[str, Any] | None = None  # (query, future of its vector)

    def start(self, conn: Any, query: str) -> None:
        """Begin embedding `query` on a worker thread, when the log has vectors to compare it
        with: the model runs while recall's other lists read the log (ONNX Runtime and SQLite
        both release the GIL), and `nearest` for the same query waits for it."""
        from capy.semantic.capsule_matrix import capsule_matrix

        if capsule_matrix(conn, self.model_id, self._model.dimensions, self._exact_rows) is None:
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="capy-recall-embed")
        self._pending = (query, self._pool.submit(self._embed, query))

    def _embed(self, query: str) -> Any:
        from capy.semantic.embedder import shared_embedder

        return shared_embedder(self._model, self._threads).vectors([query])[0]

    def _query_vector(self, query: str) -> Any:
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == query:
            return pending[1].result()
        return self._embed(query)

    def nearest(self, conn: Any, query: str, scope: Any, limit: int) -> list[int]:
        from capy.semantic.capsule_matrix import capsule_matrix

        self._cosines = {}
        dims = self._model.dimensions
        matrix = capsule_matrix(conn, self.model_id, dims, self._exact_rows)
        if matrix is None or limit < 1:
            self._pending = None
            return []
        query_vector = self._query_vector(query)
        numbers, scores = matrix.best(query_vector, self._shortlist_rows)
        close = scores >= self._min_similarity
        numbers, scores = numbers[close], scores[close]
        found = self._in_scope(conn, scope, numbers, scores, limit)
        cosine = dict(zip(numbers.tolist(), scores.tolist(), strict=True))
        self._cosines = {n: cosine[n] for n in found}
        return found

    def _in_scope(self, conn: Any, scope: Any, numbers: Any, scores: Any, limit: int) -> list[int]:
        from capy.capsules.sqlite.recall import in_scope

        if scope.condition(conn, "c.n")[0] == "1":
            return _best_first(numbers, scores, limit)
        # Each pass reads four times as many as the last until enough are in scope.
        step = max(limit * 4, 64)
        while True:
            ranked = _best_first(numbers, scores, step)
            allowed = in_scope(conn, scope, ranked)
            found = [n for n in ranked if n in allowed]
            if len(found) >= limit or len(ranked) >= len(numbers):
                return found[:limit]
            step *= 4

    def alone(self, numbers: Sequence[int]) -> list[int]:
        """Those of `numbers` (the last list `nearest` returned) close enough to the query to
        be shown when no word search matched it."""
        floor = self._min_similarity_alone
        if floor is None:
            return list(numbers)
        return [n for n in numbers if self._cosines.get(n, -1.0) >= floor]


def _best_first(numbers: Any, scores: Any, count: int) -> list[int]:
    """The `count` best capsule numbers, best first; equal scores by capsule number, as the
    rows come. Only the best are sorted: most capsules are far from any one query."""
    import numpy as np

    if count < len(scores):
        kth = np.partition(scores, len(scores) - count)[len(scores) - count]
        keep = np.flatnonzero(scores >= kth)
        numbers, scores = numbers[keep], scores[keep]
    order = np.lexsort((numbers, -scores))[:count]
    return [int(n) for n in numbers[order]]


class NoVectors:
    """Recall without the vector list (the lexical-only side of a side-by-side benchmark)."""

    def nearest(self, conn: Any, query: str, scope: Any, limit: int) -> list[int]:
        return []


def capsule_vector_search(rules: Any = None) -> CapsuleVectors | None:
    """Recall's vector list, or None without the extra or the model; `rules` are the store's
    (the installed packs by default)."""
    found = _model_and_rules(rules)
    if found is None:
        return None
    rules, model = found
    pack = rules.view("semantic")
    alone = rules.view("search").vectors.min_similarity_alone
    return CapsuleVectors(
        model,
        pack.embedding.threads,
        pack.capsule_vector_version(model),
        _matched_floor(rules, alone),
        _bounds(rules),
        # When no word search matched the question, recall would show what the vector list
        # found alone, so each capsule must be as close as a lone vector hit in search: a
        # question about something absent still comes back empty (the capsules pack's
        # `recall.vectors` says why the floor is lower while words matched).
        alone,
    )


def _recall_vectors(rules: Any) -> Any:
    """The capsules pack's `recall.vectors` (None without)."""
    recall = rules.view("capsules").recall
    return recall.vectors if recall is not None else None


def _matched_floor(rules: Any, alone: float) -> float:
    """The capsules pack's floor for vector hits while word searches matched (absent: `alone`,
    the floor on every hit)."""
    vectors = _recall_vectors(rules)
    found = None if vectors is None else vectors.min_similarity
    return alone if found is None else found


def _bounds(rules: Any) -> tuple[int, int]:
    """The capsules pack's (exact rows, shortlist rows); (0, 0), every row scored, without."""
    vectors = _recall_vectors(rules)
    return (0, 0) if vectors is None else (vectors.exact_rows, vectors.shortlist_rows)
