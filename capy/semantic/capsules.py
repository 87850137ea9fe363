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


def _capsule_version(model: Any) -> str:
    return f"{model.model_id}+capsule"


def capsule_embedder() -> LazyEmbedder | None:
    found = _model_and_rules()
    if found is None:
        return None
    rules, model = found
    return LazyEmbedder(model, rules.view("semantic").embedding.threads, _capsule_version(model))


class CapsuleVectors:
    """Recall's vector list (see capy.capsules.recall.lists.VectorSearch): the capsules whose
    chunks are nearest the query, by exact search over the current model's vectors in the
    encrypted capsule log (float16 there, float32 in memory for one query only)."""

    def __init__(self, model: Any, threads: int, version: str, min_similarity: float) -> None:
        self._model = model
        self._threads = threads
        self.model_id = version
        self._min_similarity = min_similarity

    def nearest(self, conn: Any, query: str, scope: Any, limit: int) -> list[int]:
        import numpy as np

        from capy.capsules.sqlite.recall import in_scope
        from capy.semantic.capsule_matrix import capsule_matrix
        from capy.semantic.embedder import shared_embedder

        matrix = capsule_matrix(conn, self.model_id, self._model.dimensions)
        if matrix is None or limit < 1:
            return []
        query_vector = shared_embedder(self._model, self._threads).vectors([query])[0]
        scores = matrix.best(query_vector)
        close = np.flatnonzero(scores >= self._min_similarity)
        # Best first; equal scores by capsule number, as the rows come.
        order = close[np.lexsort((matrix.numbers[close], -scores[close]))]
        ranked = [int(n) for n in matrix.numbers[order]]
        if scope.condition(conn, "c.n")[0] == "1":
            return ranked[:limit]
        found: list[int] = []
        step = max(limit * 4, 64)
        for start in range(0, len(ranked), step):
            part = ranked[start : start + step]
            allowed = in_scope(conn, scope, part)
            found += [n for n in part if n in allowed]
            if len(found) >= limit:
                break
        return found[:limit]


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
    return CapsuleVectors(
        model,
        pack.embedding.threads,
        _capsule_version(model),
        # Recall shows a capsule only the vector list found without a lexical floor, so each
        # must be as close as a lone vector hit in search: a question about something absent
        # still comes back empty.
        rules.view("search").vectors.min_similarity_alone,
    )
