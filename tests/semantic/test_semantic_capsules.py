"""Capsules on the semantic layer: the pipeline's embed stage writes vectors into the encrypted
capsule log, and recall's vector list finds a capsule said in other words. Skipped, saying
why, without the extra."""

from __future__ import annotations

import pytest

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.pipeline import drain
from capy.capsules.recall import recall
from capy.rules import load_rules

NOTES = [
    "Graceful shutdown: stop the server by sending SIGTERM; workers finish their jobs first.",
    "A 401 appears after token refresh when the clock drifts.",
    "Rename the colour palette module to theme and update its imports.",
]


def _why_not() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(load_rules())


needs_model = pytest.mark.skipif(
    _why_not() is not None,
    reason=f"semantic layer unavailable: {_why_not()} (.ci/run installs capy-mcp[semantic])",
)


def test_without_the_layer_recall_has_no_vector_list() -> None:
    from capy.semantic.capsules import NoVectors

    assert NoVectors().nearest(None, "anything", None, 5) == []


@needs_model
def test_embedded_capsules_are_recalled_by_meaning(project_dir) -> None:
    from capy.semantic.capsules import NoVectors, capsule_vector_search

    searcher = capsule_vector_search()
    assert searcher is not None
    with open_capsules(project_dir=project_dir) as store:
        store.write([CapsuleDraft(kind="note", content=note, source="cli") for note in NOTES])
        assert not drain(store).failed
        rows = store.conn.execute(
            "SELECT count(*), min(length(vector)) FROM capsule_vectors WHERE model = ?",
            (searcher.model_id,),
        ).fetchone()
        assert rows == (len(NOTES), 384 * 2)  # one float16 vector per chunk
        question = "how to halt a daemon cleanly"
        lexical = recall(store, question, vectors=NoVectors())
        hybrid = recall(store, question, vectors=searcher)
    assert not any("SIGTERM" in item.text for item in lexical.items)
    assert "SIGTERM" in hybrid.items[0].text and "vector" in hybrid.items[0].lists
