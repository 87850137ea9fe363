"""The bulk-built store of `capy bench perf --large`: the rows `grow_store` writes, a sound
index in both FTS tables, searchable, and reused from the cache by a later run."""

from __future__ import annotations

import pytest

from capy.bench.perf import grow_store, measure_large
from capy.bench.perf_large import large_store
from capy.bench.scratch import scratch_store
from capy.bench.textgen import TextGenerator
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


def test_bulk_store_holds_the_rows_grow_store_indexes(cache) -> None:
    rules = load_rules()
    with scratch_store() as grown:
        chunks, _documents = grow_store(grown, TextGenerator(4), SIZE, 0, 0, rules, None)
        with large_store(chunks, 4, rules) as built:  # stops after the same document
            _same_store(built.store.conn, grown.conn)
            assert not built.reused and built.chunks == chunks


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
    row = measure_large(SIZE, 2, 10, rules, None)
    assert row["built"] == "bulk insert, reused" and row["queries"] == 10
