"""The documents of the bulk-built store of `capy bench perf --large`, each made on its own.

A document is generated from its own seed (the run's seed and the document's number) by the
same generator and mix of content types as the stores `capy bench perf` grows, so any process
can make any document, and a million chunks are made on every core at once rather than in one
random stream in one process (which managed 70-500 chunks a second here, the builder's
bottleneck). Each worker also cuts the document with capy's own chunker (its content type
named), compresses it and counts its vocabulary, and hands back the rows the store gets.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from capy.bench.perf import CONTENT_TYPES, DOCUMENT_BYTES


@dataclass(frozen=True)
class MadeDocument:
    source: tuple  # the `sources` row
    rows: list[tuple]  # (rowid, title, content, source_id, ordinal) of each chunk
    terms: Counter[str]
    # One sentence and one identifier the document holds (when it has one): queries are drawn
    # from them, so every part of the store is asked about.
    emitted: str | None
    identifier: str | None


def document_text(seed: int, number: int) -> tuple[str, str, str | None, str | None]:
    """(content type, text, a sentence it holds, an identifier it holds) of document `number`."""
    from capy.bench.textgen import TextGenerator

    generator = TextGenerator(f"{seed}:{number}")
    kind = CONTENT_TYPES[number % len(CONTENT_TYPES)]
    text = generator.document(kind, generator.rng.randint(*DOCUMENT_BYTES))
    first = next(iter(generator.emitted), None)
    return kind, text, first, next(iter(generator.identifiers), None)


def document_label(number: int) -> str:
    return f"perf/{number}"


_chunking = None


def start_worker(chunking) -> None:
    global _chunking
    _chunking = chunking


def make_document(task: tuple[int, int, str, int]) -> MadeDocument:
    """Document `number`'s rows, as capy's indexing writes them (in a worker process);
    redaction is skipped: generated text holds no secrets."""
    from capy.digests import sha256
    from capy.store.chunkstore import chunk_for_index, chunk_terms
    from capy.store.codec import compress_text
    from capy.store.migrations import chunk_rowid

    seed, number, version, now = task
    kind, text, emitted, identifier = document_text(seed, number)
    source_id, label = number + 1, document_label(number)
    cut = chunk_for_index(text, kind, label, _chunking)
    data = text.encode("utf-8")
    source = (
        source_id,
        label,
        sha256(data).hexdigest(),
        kind,
        compress_text(text),
        len(data),
        version,
        now,
        len(cut),
    )
    rows = [
        (chunk_rowid(source_id, ordinal), chunk.title, chunk.content, source_id, ordinal)
        for ordinal, chunk in enumerate(cut)
    ]
    return MadeDocument(source, rows, chunk_terms(cut), emitted, identifier)
