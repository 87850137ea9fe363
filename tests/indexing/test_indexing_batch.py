"""Indexing many sources at once: one transaction per batch, each source all or nothing.

Real encrypted stores; the database failure is a real SQLite error raised by a trigger.
"""

from __future__ import annotations

import threading
import time

import pytest
from indexing_helpers import chunks_of, expected_vocabulary, source_row, vocabulary

from capy.store import open_store
from capy.store.batch import FIRST_GROUP_BYTES, BatchFailure, BatchItem, index_batch
from capy.store.indexing import index_content

NOTES = "# Deploy\n\nRun `make release` after the tag is pushed.\n"
LOG = "2024-05-01 12:00:00 INFO start\n2024-05-01 12:00:01 ERROR disk quota exceeded\n"


def labels(outcomes) -> list[tuple[str, str]]:
    return [(o.label, "failed" if isinstance(o, BatchFailure) else o.status) for o in outcomes]


def test_a_batch_stores_what_one_by_one_stores(store, rules, project_dir) -> None:
    items = [BatchItem("notes.md", NOTES), BatchItem("run.log", LOG.encode())]
    outcomes = index_batch(store, items, rules=rules)
    assert labels(outcomes) == [("notes.md", "indexed"), ("run.log", "indexed")]
    with open_store(project_dir, db_path=project_dir / "single.db") as single:
        for item in items:
            index_content(single, item.content, label=item.label, rules=rules)
        for outcome in outcomes:
            expected = chunks_of(single, source_row(single, outcome.label)["id"])
            assert chunks_of(store, outcome.source_id) == expected
    assert vocabulary(store) == expected_vocabulary(store)
    again = index_batch(store, items, rules=rules)
    assert labels(again) == [("notes.md", "unchanged"), ("run.log", "unchanged")]


def test_a_refused_file_is_named_and_the_others_are_stored(store, rules) -> None:
    items = [
        BatchItem("a.md", NOTES),
        BatchItem("image.png", b"\x89PNG\r\n\x1a\n\x00\x00binary"),
        BatchItem("gone.txt", lambda: open("/nonexistent/gone.txt").read()),  # noqa: SIM115
        BatchItem("b.log", LOG),
    ]
    outcomes = index_batch(store, items, rules=rules)
    assert labels(outcomes) == [
        ("a.md", "indexed"),
        ("image.png", "failed"),
        ("gone.txt", "failed"),
        ("b.log", "indexed"),
    ]
    assert "binary" in outcomes[1].message
    assert source_row(store, "a.md") and source_row(store, "b.log")


def test_a_database_error_rolls_back_that_source_alone(store, rules) -> None:
    store.conn.execute(
        # Its vocabulary is written after its row and chunks: those must go when it fails.
        "CREATE TEMP TRIGGER refuse AFTER INSERT ON vocabulary WHEN NEW.term = 'zebrafish' "
        "BEGIN SELECT RAISE(ABORT, 'no room for this one'); END"
    )
    items = [
        BatchItem("first.md", NOTES),
        BatchItem("bad.md", NOTES + "zebrafish\n"),
        BatchItem("z.log", LOG),
    ]
    outcomes = index_batch(store, items, rules=rules)
    assert labels(outcomes) == [("first.md", "indexed"), ("bad.md", "failed"), ("z.log", "indexed")]
    assert "no room for this one" in outcomes[1].message
    # Nothing of the failed source is left: no row, no chunks in either table.
    assert source_row(store, "bad.md") is None
    assert store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == sum(
        o.chunk_count for o in outcomes if not isinstance(o, BatchFailure)
    )
    assert vocabulary(store) == expected_vocabulary(store)


def test_small_batches_commit_one_after_another(store, rules) -> None:
    items = [BatchItem(f"doc-{n}.md", f"# Doc {n}\n\nword{n} here\n") for n in range(7)]
    outcomes = index_batch(store, items, rules=rules, batch_sources=3)
    assert [o.status for o in outcomes] == ["indexed"] * 7
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 7


def test_the_bulk_settings_never_outlive_the_batch(store, rules, project_dir) -> None:
    from capy.store.fts_tuning import FTS5_DEFAULTS

    index_batch(store, [BatchItem("a.md", NOTES)], rules=rules)
    with open_store(project_dir) as other:  # what every other connection reads
        for table in ("chunks", "chunks_trigram"):
            rows = dict(other.conn.execute(f"SELECT k, v FROM {table}_config").fetchall())
            for name, default in FTS5_DEFAULTS.items():
                assert int(rows.get(name, default)) == default, (table, name)


def test_a_label_twice_in_one_batch_keeps_the_last_content(store, rules) -> None:
    from capy.store.counters import counter_mismatches

    items = [
        BatchItem("notes.md", NOTES),
        BatchItem("other.log", LOG),
        BatchItem("notes.md", NOTES + "\n## Rollback\n\nRun `make undo` to revert.\n"),
        BatchItem("notes.md", NOTES + "\n## Rollback\n\nRun `make undo` to revert.\n"),
    ]
    outcomes = index_batch(store, items, rules=rules)
    assert [o.status for o in outcomes] == ["indexed", "indexed", "replaced", "unchanged"]
    row = source_row(store, "notes.md")
    assert outcomes[3].chunk_count == outcomes[2].chunk_count == len(chunks_of(store, row["id"]))
    assert any("make undo" in chunk[2] for chunk in chunks_of(store, row["id"]))
    assert vocabulary(store) == expected_vocabulary(store)
    assert counter_mismatches(store.conn) == []


def test_a_batch_writes_one_segment_per_commit(store, rules) -> None:
    # FTS5 writes its pending rows out at every savepoint after them: were each source's
    # chunks written before the next source's savepoint, 40 sources would leave about ten
    # segments (crisismerge merges every 16); written last, they make one.
    items = [BatchItem(f"doc-{n}.md", f"# Doc {n}\n\nword{n} here and there\n") for n in range(40)]
    index_batch(store, items, rules=rules)
    for table in ("chunks", "chunks_trigram"):
        segments = store.conn.execute(
            f"SELECT count(*) FROM {table}_data WHERE id > 10"  # id 1 and 10: structure, averages
        ).fetchone()[0]
        assert segments <= 4, f"{table}: {segments} data rows"


def _slow_first_group(store) -> threading.Event:
    """A trigger that makes the first group's vocabulary write slow, and an event set while it
    runs (the group is the one holding the word `firstgroupmarker`)."""
    writing = threading.Event()

    def slow_write(_term: str) -> int:
        writing.set()
        time.sleep(0.3)
        writing.clear()
        return 0

    store.conn.create_function("slow_write", 1, slow_write)
    store.conn.execute(
        "CREATE TEMP TRIGGER slow AFTER INSERT ON vocabulary WHEN NEW.term = 'firstgroupmarker' "
        "BEGIN SELECT slow_write(NEW.term); END"
    )
    return writing


FIRST = "# First\n\nfirstgroupmarker\n" + "filler words of a long document\n" * (
    FIRST_GROUP_BYTES // 30
)


def test_later_sources_are_prepared_while_a_group_is_written(store, rules) -> None:
    # A group's FTS rows and vocabulary go in on a writer thread while the sources after it
    # are read and prepared: the next file is read only once the first group's write runs
    # (or after two seconds: never, were the two done in turn).
    writing = _slow_first_group(store)
    seen: list[bool] = []

    def later() -> str:
        seen.append(writing.wait(2))
        return "# Later\n\nread while the first group was written\n"

    items = [BatchItem("first.md", FIRST), BatchItem("later.md", later), BatchItem("z.log", LOG)]
    outcomes = index_batch(store, items, rules=rules)
    assert [o.status for o in outcomes] == ["indexed"] * 3
    assert seen == [True]
    assert vocabulary(store) == expected_vocabulary(store)


def test_an_error_while_a_group_is_written_rolls_back_once_the_writer_is_done(store, rules) -> None:
    writing = _slow_first_group(store)

    def broken() -> str:
        writing.wait(2)
        raise RuntimeError("a reader that breaks")

    with pytest.raises(RuntimeError, match="a reader that breaks"):
        index_batch(store, [BatchItem("first.md", FIRST), BatchItem("x.md", broken)], rules=rules)
    assert not store.conn.in_transaction
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    again = index_batch(store, [BatchItem("again.md", NOTES)], rules=rules)
    assert [o.status for o in again] == ["indexed"]
    assert vocabulary(store) == expected_vocabulary(store)


def test_a_failure_on_a_label_met_twice_writes_each_source_once(store, rules) -> None:
    # The second `first.md` makes the group write the chunks gathered so far before its row;
    # that write fails, the transaction goes one source at a time, and nothing is written twice.
    store.conn.execute(
        "CREATE TEMP TRIGGER refuse AFTER INSERT ON vocabulary WHEN NEW.term = 'zebrafish' "
        "BEGIN SELECT RAISE(ABORT, 'no room for this one'); END"
    )
    items = [
        BatchItem("first.md", NOTES + "zebrafish\n"),
        BatchItem("other.md", NOTES + "other words\n"),
        BatchItem("first.md", NOTES),
        BatchItem("z.log", LOG),
    ]
    outcomes = index_batch(store, items, rules=rules)
    assert labels(outcomes) == [
        ("first.md", "failed"),
        ("other.md", "indexed"),
        ("first.md", "indexed"),
        ("z.log", "indexed"),
    ]
    assert vocabulary(store) == expected_vocabulary(store)
