"""The perf benchmark's generated text: seeded, of the asked size, in the asked format."""

from __future__ import annotations

import json

import pytest

from capy.bench.perf import CONTENT_TYPES
from capy.bench.textgen import TextGenerator


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_documents_have_the_size_and_shape_asked_for(content_type: str) -> None:
    text = TextGenerator(3).document(content_type, 5_000)
    assert 5_000 <= len(text.encode()) < 12_000
    if content_type == "json":
        assert len(json.loads(text)["items"]) > 3
    if content_type == "markdown":
        assert text.startswith("# ") and "\n## " in text
    if content_type == "code":
        assert text.startswith("def ")


def test_the_same_seed_gives_the_same_text_and_queries() -> None:
    first, second = TextGenerator(5), TextGenerator(5)
    assert first.document("log", 3_000) == second.document("log", 3_000)
    assert first.queries(25) == second.queries(25)
    assert TextGenerator(6).document("log", 3_000) != TextGenerator(5).document("log", 3_000)


def test_queries_mix_shapes() -> None:
    generator = TextGenerator(1)
    generator.document("plaintext", 20_000)
    queries = generator.queries(10)
    assert [shape for shape, _ in queries[:5]] == [
        "single",
        "terms",
        "phrase",
        "identifier",
        "typo",
    ]
    phrase = queries[2][1]
    assert phrase.startswith('"') and phrase.endswith('"')
    assert all(query.strip() for _, query in queries)
