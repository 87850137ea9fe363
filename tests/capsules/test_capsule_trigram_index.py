"""The capsule log's trigram table is an index only (migration 0014): a chunk's text is stored
once, in `capsule_chunks`; the trigram list still finds capsules by parts of words, and forgetting a
capsule or rebuilding the chunks still takes its rows out of the trigram list. The migration
rebuilds an older log's table in one transaction: a process killed midway leaves the old log."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from contextlib import contextmanager

import pytest

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.pipeline import drain, rebuild
from capy.capsules.recall import recall
from capy.capsules.sqlite import schema
from capy.store.migrations import applied_migrations, migrate

CONTENTLESS = "0014-contentless-trigram"
TEXTS = (
    "pytest failed: KeyError in capy/store/database.py while importing orders",
    "editing settings.py fixed the KeyError; the import retries with backoff",
    "sqlcipher3.dbapi2.OperationalError: database is locked during the nightly import",
    "The staging server's disk fills up every Friday: the log rotation is weekly.",
)
# Parts of words (only the trigram list finds them) and whole words.
QUERIES = ("ettings", "OperationalErr", "nightly import locked", "otation", "KeyError")


@contextmanager
def older_migrations():
    """Open logs as a capy before 0014 made them, inside the block (the test's isolated
    environment stays patched: only the migration list is put back)."""
    before = [migration.name for migration in schema.MIGRATIONS].index(CONTENTLESS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:before])
        yield


def fill(store) -> None:
    drafts = [CapsuleDraft(kind="note", content=text, source="cli") for text in TEXTS]
    store.write(drafts)
    drain(store)


def has_text_copy(store) -> bool:
    return bool(
        store.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'capsule_chunks_trigram_content'"
        ).fetchone()
    )


def trigram_capsules(store, phrase: str) -> list[int]:
    rows = store.conn.execute(
        "SELECT DISTINCT rowid >> 20 FROM capsule_chunks_trigram "
        "WHERE capsule_chunks_trigram MATCH ? ORDER BY 1",
        (f'"{phrase}"',),
    )
    return [row[0] for row in rows]


def recalled(store) -> list[list[tuple]]:
    return [
        [
            (item.capsule_id, item.text, item.lists, round(item.score, 9))
            for item in recall(store, q).items
        ]
        for q in QUERIES
    ]


def test_the_trigram_table_stores_no_copy_of_the_text(capsules) -> None:
    fill(capsules)
    conn = capsules.conn
    assert not has_text_copy(capsules)
    assert conn.execute(
        "SELECT count(*) FROM capsule_chunks_trigram WHERE title IS NOT NULL OR content IS NOT NULL"
    ).fetchone() == (0,)
    assert (
        conn.execute("SELECT rowid FROM capsule_chunks_trigram ORDER BY rowid").fetchall()
        == conn.execute("SELECT rowid FROM capsule_chunks ORDER BY rowid").fetchall()
    )
    # A part of a word: the trigram list finds its capsule, whose text `capsule_chunks` holds.
    (number,) = trigram_capsules(capsules, "ettings")
    content = conn.execute(
        "SELECT content FROM capsule_chunks WHERE rowid >> 20 = ?", (number,)
    ).fetchone()[0]
    assert "settings.py" in content


def test_forgetting_and_rebuilding_take_rows_out_of_the_trigram_list(capsules) -> None:
    fill(capsules)
    (number,) = trigram_capsules(capsules, "ettings")
    capsule_id = capsules.conn.execute("SELECT id FROM capsules WHERE n = ?", (number,)).fetchone()[
        0
    ]
    capsules.forget(capsule_id, "test")
    assert trigram_capsules(capsules, "ettings") == []
    assert not [item for item in recall(capsules, "ettings").items if item.capsule_id == capsule_id]
    assert len(trigram_capsules(capsules, "import")) == 2  # the other capsules stay
    rebuild(capsules, ["chunk"])
    assert capsules.conn.execute("SELECT count(*) FROM capsule_chunks_trigram").fetchone() == (0,)
    drain(capsules)
    assert len(trigram_capsules(capsules, "import")) == 2 and not trigram_capsules(
        capsules, "ettings"
    )


def test_migration_keeps_recall_and_forgetting(project_dir) -> None:
    with older_migrations(), open_capsules(project_dir=project_dir) as store:
        fill(store)
        assert has_text_copy(store)  # the old shape really held a second copy
        before = recalled(store)
        substrings = {phrase: trigram_capsules(store, phrase) for phrase in QUERIES}
    assert any(before) and substrings["ettings"]
    with open_capsules(project_dir=project_dir) as store:
        assert applied_migrations(store.conn)[-1] == CONTENTLESS
        assert not has_text_copy(store)
        assert recalled(store) == before
        assert {phrase: trigram_capsules(store, phrase) for phrase in QUERIES} == substrings
        assert migrate(store.conn, schema.MIGRATIONS) == []  # applied once
        (number,) = substrings["ettings"]
        capsule_id = store.conn.execute(
            "SELECT id FROM capsules WHERE n = ?", (number,)
        ).fetchone()[0]
        store.forget(capsule_id, "test")
        assert trigram_capsules(store, "ettings") == []


KILLED_MIGRATION = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from capy.capsules import open_capsules
    from capy.capsules.sqlite import schema
    from capy.store.migrations import Migration

    def die(conn):  # after the new index is built, before the transaction commits
        os.kill(os.getpid(), signal.SIGKILL)

    schema.MIGRATIONS = tuple(
        m if m.name != sys.argv[2] else Migration(m.name, m.sql, then=die)
        for m in schema.MIGRATIONS
    )
    open_capsules(project_dir=Path(sys.argv[1]))
    """
)


def test_a_migration_killed_midway_leaves_the_old_log(project_dir) -> None:
    with older_migrations(), open_capsules(project_dir=project_dir) as store:
        fill(store)
        before = recalled(store)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MIGRATION, str(project_dir), CONTENTLESS],
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    # Opened without applying 0014:
    with older_migrations(), open_capsules(project_dir=project_dir) as store:
        assert CONTENTLESS not in applied_migrations(store.conn)
        assert has_text_copy(store)
        assert recalled(store) == before
    with open_capsules(project_dir=project_dir) as store:  # the next open completes it
        assert applied_migrations(store.conn)[-1] == CONTENTLESS
        assert not has_text_copy(store)
        assert recalled(store) == before
