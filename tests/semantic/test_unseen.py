"""The `unseen` rules of the semantic pack: markup stripped from what the embedding model reads."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from capy.rules import load_rules

RULES = load_rules()


def _model_missing() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(RULES)


needs_model = pytest.mark.skipif(
    _model_missing() is not None,
    reason=f"semantic layer unavailable: {_model_missing()} (.ci/run installs capy-mcp[semantic])",
)


def test_many_unclosed_comment_openings_are_stripped_in_one_pass() -> None:
    embedding = RULES.view("semantic").embedding
    hostile = "<!--" * 50_000  # 200 KB: 154 s of CPU with the lazy `<!--.*?-->`
    started = time.process_time()
    assert embedding.without_unseen(hostile) == hostile
    assert time.process_time() - started < 5.0  # a generous bound: about 2 ms here
    # real comments still go, the first `-->` closing the one opened last
    text = "a <!-- YAML\nadded: v1\n--> b <!-- x --> c <!-- open"
    assert embedding.without_unseen(text) == "a  b  c <!-- open"


@needs_model
def test_the_strip_reads_no_more_than_the_pieces_can_hold() -> None:
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import pieces_for

    model, pieces = pieces_for(RULES)
    cap = RULES.view("semantic").embedding.readable_chars(model)
    assert pieces.chars == cap and cap is not None
    assert cap >= pieces.most * (pieces.size or model.max_tokens)  # at least a char a token
    seen: list[int] = []

    def readable(text: str) -> str:
        seen.append(len(text))
        return text

    recording = replace(pieces, readable=readable)
    embedder = shared_embedder(model)
    whole = "word " * (cap // 2)  # a tool result twice as long as any pieces can hold
    cut = recording.cut(embedder, "Title", whole)
    assert seen == [cap]
    assert cut == pieces.cut(embedder, "Title", whole[:cap])
    assert len(cut) == pieces.most
