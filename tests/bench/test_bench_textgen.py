"""The perf benchmark's generated text: seeded, of the asked size, in the asked format."""

from __future__ import annotations

import json
import re
from collections import Counter

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


def _document_frequencies(pieces: list[str], ignore: frozenset[str]) -> list[float]:
    counts: Counter[str] = Counter()
    for piece in pieces:
        counts.update({w for w in re.findall(r"[a-z]{3,}", piece.lower()) if w not in ignore})
    return sorted((n / len(pieces) for n in counts.values()), reverse=True)


def test_word_frequencies_look_like_real_text() -> None:
    """A word in most passages (the old generator's "value" was in 78% of chunks) makes every
    query slow and says nothing about real stores: the head stays below a third of passages,
    and the tail is long (units such as "ms" and "id" aside)."""
    generator = TextGenerator(2)
    pieces = []
    for _ in range(60):
        pieces.extend(generator.document("plaintext", 4_000).split("\n\n"))
    frequencies = _document_frequencies(pieces, generator.structure)
    assert len(pieces) > 300
    assert 0.05 < frequencies[0] < 0.35
    assert frequencies[100] < 0.08
    assert len(frequencies) > 5_000


def test_each_document_returns_to_its_own_topic() -> None:
    generator = TextGenerator(4)
    first, second = (generator.document("markdown", 8_000) for _ in range(2))
    common = [
        Counter(w for w in re.findall(r"[a-z]+", text.lower()) if w not in generator.structure)
        for text in (first, second)
    ]
    top_first = {w for w, _ in common[0].most_common(10)}
    top_second = {w for w, _ in common[1].most_common(10)}
    assert len(top_first & top_second) <= 3


@pytest.mark.parametrize("content_type", ["log", "code"])
def test_logs_and_code_come_from_several_templates(content_type: str) -> None:
    text = TextGenerator(8).document(content_type, 20_000)
    if content_type == "log":
        assert all(marker in text for marker in ("GET ", "connection to ", "cache ", "worker "))
    else:
        assert "class " in text and "def test_" in text and "function " in text
