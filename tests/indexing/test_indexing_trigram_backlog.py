"""Trigram blocks written after the indexing call (capy.store.trigram_backlog): a source is
found by substring before and after, the blocks written are those an inline write leaves, and
writers beside the catch-up lose nothing."""

from __future__ import annotations

import threading

from indexing_helpers import block_rowids, chunks_of, trigram_rowids

from capy.store import open_store
from capy.store import trigram_backlog as backlog_module
from capy.store.corpus import search_store
from capy.store.indexing import index_content
from capy.store.trigram_backlog import catch_up, pending_chunks

# "quokkamatic" is the only word holding "okkamat": only the trigram list can find it.
BODY = "\n\n".join(
    f"## Part {n}\n\nThe quokkamatic{n} gauge reads {n * 7} on shelf {n}." for n in range(60)
)


def _hit_titles(store, rules, query: str, **filters) -> list[str]:
    [result] = search_store(store, [query], limit=5, rules=rules, **filters)
    return [hit.title for hit in result.hits]


def _index_several(store, rules, prefix: str, count: int, defer) -> None:
    """`count` sources of BODY, each with a word of its own; `defer(number)` says which defer."""
    for number in range(count):
        text = f"{BODY}\n\n{prefix} {number}"
        index_content(
            store, text, label=f"{prefix}{number}", rules=rules, defer_trigram=defer(number)
        )


def _catch_up_all(store) -> None:
    while catch_up(store.conn):
        pass


def test_a_deferred_source_is_found_by_substring_before_and_after_its_blocks(store, rules):
    result = index_content(store, BODY, label="gauges.md", rules=rules, defer_trigram=True)
    assert trigram_rowids(store, result.source_id) == []
    assert pending_chunks(store.conn) == result.chunk_count
    before = _hit_titles(store, rules, "okkamatic17")
    assert before and "Part 17" in before[0]

    _catch_up_all(store)
    assert pending_chunks(store.conn) == 0
    chunk_ids = [row[0] for row in chunks_of(store, result.source_id)]
    assert trigram_rowids(store, result.source_id) == block_rowids(chunk_ids)
    assert _hit_titles(store, rules, "okkamatic17") == before


def test_a_source_half_caught_up_is_found_in_both_halves(store, rules):
    result = index_content(store, BODY, label="gauges.md", rules=rules, defer_trigram=True)
    assert result.chunk_count > 32
    assert catch_up(store.conn, most_chunks=16) is True  # the first block only
    assert trigram_rowids(store, result.source_id) == [result.source_id << 20]
    for part in (2, 40):
        titles = _hit_titles(store, rules, f"okkamatic{part}")
        assert titles and f"Part {part}" in titles[0]


def test_a_pending_source_outside_the_scope_is_not_found(store, rules):
    index_content(store, BODY, label="gauges.md", rules=rules, defer_trigram=True)
    index_content(store, "nothing of note here", label="other.md", rules=rules)
    assert _hit_titles(store, rules, "okkamatic3", source="other.md") == []
    assert _hit_titles(store, rules, "okkamatic3", source="gauges.md")


def test_catching_up_writes_what_an_inline_write_leaves(project_dir, tmp_path, rules):
    stores = []
    for name, defer in (("inline.db", False), ("deferred.db", True)):
        with open_store(project_dir, db_path=tmp_path / name) as store:
            _index_several(store, rules, "extra", 3, lambda _, defer=defer: defer)
            _catch_up_all(store)
            rows = store.conn.execute("SELECT rowid FROM chunks_trigram ORDER BY 1").fetchall()
            found = [_hit_titles(store, rules, q) for q in ("okkamatic4", "eads 35", "xtra 2")]
            stores.append((rows, found))
    assert stores[0] == stores[1]


def test_a_rewritten_or_deleted_pending_source_leaves_no_stale_marker(store, rules):
    first = index_content(store, BODY, label="gauges.md", rules=rules, defer_trigram=True)
    rewritten = index_content(store, "# Other\n\nzebrafinch notes", label="gauges.md", rules=rules)
    assert rewritten.source_id == first.source_id
    assert pending_chunks(store.conn) == 0  # the inline rewrite wrote its blocks and no marker
    assert trigram_rowids(store, first.source_id) == [first.source_id << 20]

    gone = index_content(store, BODY, label="gone.md", rules=rules, defer_trigram=True)
    with store.conn:
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.execute("DELETE FROM sources WHERE id = ?", (gone.source_id,))
    assert catch_up(store.conn) is False
    markers = store.conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'trigram_pending:%'")
    assert markers.fetchone() == (0,)
    assert trigram_rowids(store, gone.source_id) == []


def test_a_full_backlog_makes_the_writer_write_its_own_blocks(store, rules, monkeypatch):
    first = index_content(store, BODY, label="a.md", rules=rules, defer_trigram=True)
    monkeypatch.setattr(backlog_module, "MAX_PENDING_CHUNKS", first.chunk_count + 5)
    second = index_content(store, BODY + " more", label="b.md", rules=rules, defer_trigram=True)
    assert pending_chunks(store.conn) == first.chunk_count
    assert trigram_rowids(store, second.source_id)


def test_writers_beside_a_catch_up_lose_nothing(project_dir, rules):
    """A catch-up on its own connection while another connection indexes, inline and deferred:
    every source ends with exactly the blocks of its chunks, and no marker is left."""
    with open_store(project_dir) as store:
        _index_several(store, rules, "first", 12, lambda _: True)
    stop = threading.Event()
    failures: list[BaseException] = []

    def catching_up() -> None:
        try:
            with open_store(project_dir) as own:
                while not stop.is_set():
                    catch_up(own.conn, most_chunks=40)
        except BaseException as error:  # reported below
            failures.append(error)

    thread = threading.Thread(target=catching_up)
    thread.start()
    try:
        with open_store(project_dir) as store:
            _index_several(store, rules, "second", 12, lambda number: number % 2 == 0)
    finally:
        stop.set()
        thread.join()
    assert failures == []
    with open_store(project_dir) as store:
        _catch_up_all(store)
        ids = [row[0] for row in store.conn.execute("SELECT id FROM sources")]
        assert len(ids) == 24
        for source_id in ids:
            chunk_ids = [row[0] for row in chunks_of(store, source_id)]
            assert chunk_ids and trigram_rowids(store, source_id) == block_rowids(chunk_ids)
        assert pending_chunks(store.conn) == 0


def test_a_call_waiting_to_write_goes_before_the_catch_up():
    from capy.store.trigram_backlog import WriteTurn

    turn, order = WriteTurn(), []

    def take(kind: str) -> None:
        with turn.call() if kind == "call" else turn.catch_up():
            order.append(kind)

    with turn.call():  # a call is writing; the catch-up, then another call, wait for it
        catching_up = threading.Thread(target=take, args=("catch-up",))
        catching_up.start()
        calling = threading.Thread(target=take, args=("call",))
        calling.start()
        while turn._calls_waiting == 0:
            threading.Event().wait(0.01)
    calling.join()
    catching_up.join()
    assert order == ["call", "catch-up"]
