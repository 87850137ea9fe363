"""A search is a read: its hits go to the log beside the database (capy.store.access_log),
and reach the access counts before anything that reads them decides."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

from capy.store.access_log import fold_access, log_path, note_access, pending_access
from capy.store.corpus import search_store
from capy.store.retention import apply_cleanup, plan_cleanup, summarize_sources

DOC = [("Breaker", "The circuit breaker resets after the timeout expires.")]


def counts(store, source_id):
    return store.conn.execute(
        "SELECT access_count, accessed_at FROM sources WHERE id = ?", (source_id,)
    ).fetchone()


def test_a_search_writes_nothing_to_the_database(store, put, rules):
    source_id = put("wal.go", DOC)
    changes = store.conn.total_changes
    (result,) = search_store(store, ["breaker"], rules=rules)
    assert result.hits and store.conn.total_changes == changes
    assert counts(store, source_id) == (0, None)
    assert list(pending_access(store.path)) == [source_id]
    assert os.stat(log_path(store.path)).st_mode & 0o777 == 0o600


def test_a_cleanup_plan_counts_the_pending_hits_and_empties_the_log(store, put, rules):
    source_id = put("wal.go", DOC)
    search_store(store, ["breaker"], rules=rules)
    search_store(store, ["breaker"], rules=rules)
    plan_cleanup(store, rules=rules)
    count, accessed = counts(store, source_id)
    assert count == 2 and accessed is not None
    assert pending_access(store.path) == {}
    assert os.path.getsize(log_path(store.path)) == 0


def test_a_source_searched_after_the_plan_is_skipped(store, put, rules):
    put("old-run", DOC, kind="ephemeral")
    store.conn.execute("UPDATE sources SET created_at = 1, indexed_at = 1, expires_at = 2")
    plan = plan_cleanup(store, rules=rules)
    assert [item.label for item in plan.items] == ["old-run"]
    search_store(store, ["breaker"], rules=rules, kinds=["ephemeral"])
    report = apply_cleanup(store, plan)
    assert report.removed == () and [item.label for item in report.skipped] == ["old-run"]


def test_stats_tiers_include_the_pending_hits_without_writing(store, index, rules):
    source_id = index("wal.go", DOC[0][1], rules=rules).source_id
    store.conn.execute(
        "UPDATE sources SET created_at = 1, indexed_at = 1 WHERE id = ?", (source_id,)
    )
    before = summarize_sources(store, rules=rules)
    for _ in range(12):
        note_access(store.path, [source_id])
    changes = store.conn.total_changes
    after = summarize_sources(store, rules=rules)
    assert after != before  # recently and often read: a higher tier
    assert store.conn.total_changes == changes
    fold_access(store.conn, store.path)
    assert summarize_sources(store, rules=rules) == after


def test_a_reused_id_inherits_no_hits(store, put, rules):
    source_id = put("gone", DOC)
    note_access(store.path, [source_id], now=1000)
    store.conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))
    assert put("new", DOC) == source_id  # SQLite hands the id out again
    fold_access(store.conn, store.path)
    assert counts(store, source_id) == (0, None)


def test_a_torn_line_is_dropped_not_misread(store, put):
    source_id = put("wal.go", DOC)
    note_access(store.path, [source_id], now=2_000_000_000)
    with open(log_path(store.path), "ab") as log:
        log.write(b"12 17")  # a crash in the middle of a line
    assert pending_access(store.path) == {source_id: (1, 2_000_000_000)}


def test_a_search_folds_a_log_past_the_pack_size(store, put, rules):
    source_id = put("wal.go", DOC)
    limit = rules.view("retention").cleanup.access_log_fold_bytes
    with open(log_path(store.path), "ab") as log:
        log.write(f"{source_id} 1000\n".encode() * (limit // 7 + 1))
    search_store(store, ["breaker"], rules=rules)
    assert pending_access(store.path) == {}
    assert counts(store, source_id)[0] == limit // 7 + 2


def test_an_unwritable_log_falls_back_to_the_database(store, put, rules):
    source_id = put("wal.go", DOC)
    os.mkdir(log_path(store.path))  # cannot be opened for appending
    search_store(store, ["breaker"], rules=rules)
    assert counts(store, source_id)[0] == 1


APPENDER = """
import sys
from capy.store.access_log import note_access
for _ in range(int(sys.argv[3])):
    note_access(sys.argv[1], [int(sys.argv[2])])
"""


def test_hits_appended_by_processes_while_folding_are_all_counted(store, put):
    source_id = put("wal.go", DOC)
    workers, each = 4, 150
    running = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(store.path), str(source_id), str(each)]
        )
        for _ in range(workers)
    ]
    while any(process.poll() is None for process in running):
        fold_access(store.conn, store.path)
    assert all(process.returncode == 0 for process in running)
    fold_access(store.conn, store.path)
    assert counts(store, source_id)[0] == workers * each


def test_a_dry_run_plan_changes_nothing_a_search_returns(store, put, rules):
    put("wal.go", DOC)
    (first,) = search_store(store, ["breaker"], rules=rules)
    plan = plan_cleanup(store, rules=rules)
    apply_cleanup(store, replace(plan, items=()))
    (second,) = search_store(store, ["breaker"], rules=rules)
    assert first == second
