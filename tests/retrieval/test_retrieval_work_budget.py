"""The budget of passes that can only add counts work (SQLite virtual-machine steps), not time:
the same query on the same store is cut, or not, the same way on a fast machine, a slow one or
a loaded one, so its results are the same everywhere."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from capy.retrieval import search
from capy.retrieval.model import WorkBudget
from capy.store import open_store
from capy.store.budget import STEPS_PER_CHECK, fetch_within
from tests.retrieval.conftest import put_chunks
from tests.retrieval.test_retrieval_speed_paths import recording, with_search

_ROWS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "


def _slow(value):
    """A step that costs a slow machine's CPU time (30 us), the same step for SQLite."""
    end = time.thread_time() + 30e-6
    while time.thread_time() < end:
        pass
    return value


def test_a_slower_step_spends_the_same_budget(store):
    store.conn.create_function("fast", 1, lambda value: value)
    store.conn.create_function("slow", 1, _slow)
    fast, slow = WorkBudget(), WorkBudget()
    started = time.thread_time()
    rows = fetch_within(store.conn, _ROWS + "SELECT slow(i) FROM n", (), slow)
    slow_ms = (time.thread_time() - started) * 1000
    assert rows == fetch_within(store.conn, _ROWS + "SELECT fast(i) FROM n", (), fast)
    assert len(rows) == 3000 and slow_ms > 60  # far past the old 3 ms of CPU
    assert slow.spent == fast.spent > 0
    # A limit below that work cuts both statements at the same step, however long each took.
    half = fast.spent // 2
    cut_fast, cut_slow = WorkBudget(half), WorkBudget(half)
    assert fetch_within(store.conn, _ROWS + "SELECT fast(i) FROM n", (), cut_fast) is None
    assert fetch_within(store.conn, _ROWS + "SELECT slow(i) FROM n", (), cut_slow) is None
    assert cut_fast.spent == cut_slow.spent == (half // STEPS_PER_CHECK + 1) * STEPS_PER_CHECK


def test_a_spent_budget_starts_no_statement(store):
    spent = WorkBudget(limit=1000, spent=2000)
    assert fetch_within(store.conn, "SELECT 1", (), spent) is None
    assert spent.spent == 2000


def _searches(path: Path, rules) -> list[tuple]:
    """Three searches on a fresh store: their hits, the lists each ran and the steps each spent.
    A step count is exact to the progress handler's grain per statement, whose phase carries
    over from the statement's earlier runs: equal histories make equal counts."""
    with open_store(db_path=path) as store:
        put_chunks(store, "notes.md", [("a", "writer segments"), ("b", "the writer segments")])
        rewriters = [(f"n{n}", f"the rewriters flush subsegments {n}") for n in range(200)]
        put_chunks(store, "rewrite.md", rewriters)
        runs = []
        for _ in range(3):
            corpus = recording(store, rules)
            result = search(corpus, "writer segments", rules=rules.view("search"), limit=10)
            hits = [(hit.chunk_id, hit.layer, round(hit.score, 9)) for hit in result.hits]
            runs.append((hits, corpus.calls, corpus.spent))
        return runs


def test_the_same_search_gives_the_same_results_whatever_else_burns_cpu(tmp_path, rules):
    # A budget the optional trigram pass runs out of part way: the cut must fall the same way.
    tight = with_search(
        rules, "query", optional_pass_budget_steps=300, trigram_when_porter_below=100
    )
    quiet = _searches(tmp_path / "quiet.db", tight)
    stop = threading.Event()

    def burn() -> None:
        while not stop.is_set():
            sum(range(10_000))

    burners = [threading.Thread(target=burn) for _ in range(2)]
    for burner in burners:
        burner.start()
    try:
        busy = _searches(tmp_path / "busy.db", tight)
    finally:
        stop.set()
        for burner in burners:
            burner.join()
    assert busy == quiet
    calls, spent = quiet[0][1], quiet[0][2]
    trigram = calls.index(("trigram", '"writer" AND "segments"', 300))
    assert spent[trigram] > 300  # the cut fell, at the same step in every run


def _substring_store(store, others: int) -> None:
    """A chunk only the trigram list finds for "writer segments" (the words inside longer
    ones), beside `others` chunks of other text; porter finds one chunk."""
    from capy.store.counters import add_chunk_count

    chunks = [
        ("notes", "the writer segments"),
        ("rewrite", "the rewriters flush subsegments"),
        *((f"n{n}", f"an unrelated line {n}") for n in range(others)),
    ]
    source = put_chunks(store, "notes.md", chunks)
    add_chunk_count(store.conn, source, len(chunks))  # as the indexer keeps the counters


@pytest.mark.parametrize(("others", "found"), [(8, True), (40, False)])
def test_an_optional_pass_runs_only_on_a_store_of_at_most_its_chunks(
    tmp_path, rules, others, found
):
    # A step limit does not bound a query that walks long doclists between two steps, so on a
    # store past the pack's size the optional trigram pass is not run at all.
    small = with_search(rules, "query", optional_pass_max_chunks=20, trigram_when_porter_below=100)
    with open_store(db_path=tmp_path / "k.db") as store:
        _substring_store(store, others)
        result = search(recording(store, small), "writer segments", rules=small.view("search"))
    titles = [hit.title for hit in result.hits]
    assert titles[0] == "notes"
    assert ("rewrite" in titles) is found


def test_a_pass_that_is_the_only_way_runs_on_a_store_of_any_size(tmp_path, rules):
    from capy.store.counters import add_chunk_count

    small = with_search(rules, "query", optional_pass_max_chunks=20)
    with open_store(db_path=tmp_path / "k.db") as store:
        put_chunks(store, "wal.go", [("Options", "w := bufio.NewWriterSize(f, 1<<16)")])
        later = put_chunks(
            store, "later.md", [(f"n{n}", f"an unrelated line {n}") for n in range(40)]
        )
        add_chunk_count(store.conn, later, 40)
        result = search(recording(store, small), "WriterSize", rules=small.view("search"))
    assert [hit.title for hit in result.hits] == ["Options"]
