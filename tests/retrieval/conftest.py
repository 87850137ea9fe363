"""A real encrypted store per test, and two ways to fill it: `put_chunks` writes exact rows (for
tests about which list found what), `index_text` goes through the real indexer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from capy.rules import build_ruleset
from capy.store import Store, chunk_rowid, open_store, transaction
from capy.store.chunkstore import insert_fts_rows
from capy.store.corpus import StoreCorpus
from capy.store.vocabulary import term_counts


@pytest.fixture(scope="session")
def shipped_rules():
    """The shipped packs alone, validated once per session (no overlays can exist in tests)."""
    ruleset = build_ruleset()
    assert ruleset.ok, ruleset.diagnostics
    return ruleset


@pytest.fixture
def rules(shipped_rules):
    return shipped_rules


@pytest.fixture
def search_rules(rules):
    return rules.view("search")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(db_path=tmp_path / "k.db") as opened:
        yield opened


@pytest.fixture
def corpus(store: Store, rules) -> StoreCorpus:
    kinds = tuple(str(kind) for kind in rules.view("retention").kinds.default_search)
    return StoreCorpus(store, default_kinds=kinds, bm25=rules.view("search").bm25)


def put_chunks(
    store: Store, label: str, chunks: Sequence[tuple[str, str]], *, kind: str = "durable"
) -> int:
    """Insert a source with (title, content) chunks into both FTS tables and the vocabulary."""
    conn = store.conn
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
            "VALUES (?, ?, 'test', 'plaintext', x'', 0)",
            (label, kind),
        )
        source_id = cursor.lastrowid
        words: Counter[str] = Counter()
        rows = [
            (chunk_rowid(source_id, ordinal), title, content, source_id, ordinal)
            for ordinal, (title, content) in enumerate(chunks)
        ]
        for table in ("chunks", "chunks_trigram"):  # a trigram row holds a block of chunks
            insert_fts_rows(conn, table, rows)
        for _, title, content, _, _ in rows:
            words.update(term_counts((title, content)))
        conn.executemany(
            "INSERT INTO vocabulary (term, frequency) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET frequency = frequency + excluded.frequency",
            words.items(),
        )
    return source_id


def index_text(store: Store, label: str, text: str, *, kind: str = "durable", **options):
    from capy.store.indexing import index_content

    return index_content(store, text, label=label, kind=kind, **options)


@pytest.fixture
def put(store: Store):
    """`put(label, [(title, content), ...], kind=...)` -> source id."""
    return lambda label, chunks, **options: put_chunks(store, label, chunks, **options)


@pytest.fixture
def index(store: Store):
    """`index(label, text, kind=..., content_type=...)` through the real indexer."""
    return lambda label, text, **options: index_text(store, label, text, **options)
