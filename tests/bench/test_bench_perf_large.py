"""The bulk-built store of `capy bench perf --large`: the rows capy's own indexing writes for
the same documents, a sound index in both FTS tables, searchable, and reused from the cache by
a later run."""

from __future__ import annotations

import re

import pytest

from capy.bench.perf import measure_large
from capy.bench.perf_large import large_store
from capy.bench.perf_large_docs import document_label, document_text
from capy.bench.scratch import scratch_store
from capy.rules import load_rules
from capy.store.corpus import search_store

SIZE = 400


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _rows(conn, table: str) -> list[tuple]:
    if table == "chunks":
        return conn.execute(
            "SELECT rowid, title, content, source_id, ordinal FROM chunks ORDER BY rowid"
        ).fetchall()
    # The trigram table is an index only: its rows' sizes and every term's counts stand for it.
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.trigram_terms "
        "USING fts5vocab(main, chunks_trigram, row)"
    )
    return [
        *conn.execute("SELECT id, sz FROM chunks_trigram_docsize ORDER BY id"),
        *conn.execute("SELECT term, doc, cnt FROM temp.trigram_terms ORDER BY term"),
    ]


def test_bulk_store_holds_the_rows_index_batch_writes(cache) -> None:
    from capy.store.batch import BatchItem, index_batch

    rules = load_rules()
    with large_store(SIZE, 4, rules) as built, scratch_store() as indexed:
        assert not built.reused and built.chunks >= SIZE
        items = []
        for number in range(built.documents):
            kind, text, _sentence, _identifier = document_text(4, number)
            items.append(BatchItem(document_label(number), text, content_type=kind))
        outcomes = index_batch(indexed, items, rules=rules)
        assert sum(outcome.chunk_count for outcome in outcomes) == built.chunks
        _same_store(built.store.conn, indexed.conn)
        # A sentence of most documents to ask about (one with none sampled gives none).
        assert built.documents // 2 < len(built.emitted) <= built.documents
        assert all(_holds(indexed, sentence) for sentence in built.emitted[:5])


def _holds(store, sentence: str) -> bool:
    """Whether a chunk holds the sentence's first words as a phrase (lines may wrap inside it)."""
    phrase = " ".join(re.findall(r"[A-Za-z]+", sentence)[:4])
    (found,) = store.conn.execute(
        "SELECT count(*) FROM chunks WHERE chunks MATCH ?", (f'"{phrase}"',)
    ).fetchone()
    return found > 0


def _same_store(bulk, slow) -> None:
    for table in ("chunks", "chunks_trigram"):
        assert _rows(bulk, table) == _rows(slow, table)
        # The index itself is sound (for `chunks`, FTS5 checks it against the content too).
        bulk.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
    for query in (
        "SELECT id, label, kind, content_type, raw_size, chunk_count FROM sources",
        "SELECT * FROM kind_counters",
        "SELECT term, frequency FROM vocabulary ORDER BY term",
    ):
        assert bulk.execute(query).fetchall() == slow.execute(query).fetchall()


def test_bulk_store_is_searched_and_reused(cache) -> None:
    rules = load_rules()
    with large_store(SIZE, 2, rules) as first:
        word = first.emitted[0].split()[-1].strip(".").lower()
        (result,) = search_store(first.store, [word], limit=5, rules=rules)
        assert result.hits
    with large_store(SIZE, 2, rules) as again:
        assert again.reused and again.chunks == first.chunks
    assert not list(cache.rglob(".building-*"))
    row = measure_large(SIZE, 2, 10, rules, None, calls=3)
    assert row["built"] == "bulk insert, reused" and row["queries"] == 10
    # Through the tool call too: `capy serve` on the bulk-built store, its key from the cache.
    through = row["through_calls"]
    assert through["calls"] == 3 and 0 < through["call_p50_ms"] <= through["call_p95_ms"]
