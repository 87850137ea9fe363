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


def capsule_embedder() -> LazyEmbedder | None:
    from capy.rules import load_rules
    from capy.semantic.service import doctor_line

    rules = load_rules()
    if not doctor_line(rules)[0]:
        return None
    pack = rules.view("semantic")
    model = pack.model()
    return LazyEmbedder(model, pack.embedding.threads, f"{model.model_id}+capsule")
