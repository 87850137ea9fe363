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


def _model_and_rules() -> tuple[Any, Any] | None:
    from capy.rules import load_rules
    from capy.semantic.service import doctor_line

    rules = load_rules()
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

        from capy.semantic.embedder import decode, shared_embedder

        condition, params = scope.condition(conn, "v.capsule_n")
        rows = conn.execute(
            f"SELECT v.capsule_n, v.vector FROM capsule_vectors AS v "
            f"WHERE v.model = ? AND {condition}",
            [self.model_id, *params],
        ).fetchall()
        if not rows or limit < 1:
            return []
        numbers = np.array([row[0] for row in rows], dtype=np.int64)
        vectors = decode([row[1] for row in rows], self._model.dimensions).astype(np.float32)
        query_vector = shared_embedder(self._model, self._threads).vectors([query])[0]
        scores = vectors @ query_vector
        best: dict[int, float] = {}
        for number, value in zip(numbers.tolist(), scores.tolist(), strict=True):
            if value > best.get(number, -2.0):
                best[number] = value  # a capsule scores as its best chunk
        order = sorted(best, key=lambda number: -best[number])
        return [n for n in order if best[n] >= self._min_similarity][:limit]


class NoVectors:
    """Recall without the vector list (the lexical-only side of a side-by-side benchmark)."""

    def nearest(self, conn: Any, query: str, scope: Any, limit: int) -> list[int]:
        return []


def capsule_vector_search() -> CapsuleVectors | None:
    """Recall's vector list, or None without the extra or the model."""
    found = _model_and_rules()
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
