"""The loaded model's memory is bounded in a long-lived process: nothing loads for an empty
backlog, and a model nobody used for the pack's `release_after_seconds` is dropped (then loads
again on the next use, giving the same vectors). On the real pinned model; skipped without it."""

from __future__ import annotations

import numpy as np
import pytest

from capy.bench.scratch import scratch_store
from capy.rules import load_rules
from capy.store.indexing import index_content

RULES = load_rules()


def _model_missing() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(RULES)


pytestmark = pytest.mark.skipif(
    _model_missing() is not None,
    reason=f"semantic layer unavailable: {_model_missing()} (.ci/run installs capy-mcp[semantic])",
)


def _loaded() -> int:
    from capy.semantic import embedder

    return len(embedder._sessions)


def test_a_round_with_an_empty_backlog_loads_no_model() -> None:
    from capy.semantic.embedder import release_unused
    from capy.semantic.service import index_now

    release_unused(0)
    with scratch_store() as store:
        index_content(store, "stop the daemon now", label="run", kind="ephemeral", rules=RULES)
        assert index_now(store, RULES) == 0  # ephemeral output gets no vectors
    assert _loaded() == 0


def test_an_unused_model_is_released_and_loads_again_with_the_same_vectors() -> None:
    from capy.semantic.embedder import release_unused, shared_embedder

    model = RULES.view("semantic").model()
    before = shared_embedder(model).vectors(["send SIGTERM to end the service"])
    assert release_unused(3600) == 0  # used just now: kept
    assert _loaded() >= 1
    assert release_unused(0) >= 1
    assert _loaded() == 0
    after = shared_embedder(model).vectors(["send SIGTERM to end the service"])
    assert np.allclose(before, after, atol=1e-6)


def test_lookups_gather_int8_rows_first_with_the_same_vectors() -> None:
    import onnxruntime

    from capy.semantic.artifacts import locate
    from capy.semantic.graph import gather_before_dequantize

    model = RULES.view("semantic").model()
    original = locate(model).path("model.onnx").read_bytes()
    rewritten = gather_before_dequantize(original)
    assert rewritten != original
    assert gather_before_dequantize(rewritten) == rewritten  # no pattern left: unchanged

    def session(graph: bytes):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    ids = np.array([[101, 2000, 7592, 2088, 102], [101, 3000, 2003, 102, 0]], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": (ids > 0).astype(np.int64)}
    feeds["token_type_ids"] = np.zeros_like(ids)
    expected = session(original).run(None, feeds)[0]
    assert np.array_equal(session(rewritten).run(None, feeds)[0], expected)
