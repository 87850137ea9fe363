"""Opening damaged, plaintext and foreign files: one clear error, or moved aside, started fresh."""

from __future__ import annotations

import os
import sqlite3

import pytest

from capy.store import (
    PlaintextDatabaseError,
    WrongKeyError,
    open_store,
)
from capy.store.database import PAGE_SIZE, connect, key_check_path


def notices() -> tuple[list[str], object]:
    seen: list[str] = []
    return seen, seen.append


def test_plaintext_database_is_refused_and_left_alone(env, snapshot) -> None:
    env.db_path.parent.mkdir(parents=True)
    plain = sqlite3.connect(env.db_path)
    plain.execute("CREATE TABLE notes (body TEXT)")
    plain.execute("INSERT INTO notes VALUES ('hello')")
    plain.commit()
    plain.close()
    before = env.db_path.read_bytes()
    with pytest.raises(PlaintextDatabaseError) as caught:
        open_store()
    assert env.normalise(caught.value.message) == snapshot
    assert env.db_path.read_bytes() == before
    assert not env.key_file.exists()


def _fill(env, sources: int = 200) -> None:
    with open_store() as store:
        for number in range(sources):
            store.conn.execute(
                "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
                "VALUES (?, 'durable', 'h', 'plaintext', randomblob(900), 900)",
                (f"source-{number}",),
            )


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda size: os.urandom(3 * PAGE_SIZE), id="random-pages"),
        pytest.param(lambda size: os.urandom(1000), id="shorter-than-a-page"),
        pytest.param(lambda size: None, id="truncated-mid-page"),
    ],
)
def test_damaged_file_is_moved_aside_and_replaced(env, damage) -> None:
    _fill(env)
    path = env.db_path
    data = damage(path.stat().st_size)
    if data is None:
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size - 100)
    else:
        path.write_bytes(data)
    damaged = path.read_bytes()
    seen, notify = notices()
    with open_store(notify=notify) as store:
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)
    moved = list(path.parent.glob("knowledge.db.corrupt-*"))
    assert [file.read_bytes() for file in moved] == [damaged]  # nothing was deleted
    assert len(seen) == 1
    assert "moved it aside" in seen[0] and moved[0].name in seen[0]


def test_notice_text(env, snapshot) -> None:
    _fill(env, 1)
    env.db_path.write_bytes(os.urandom(100))
    seen, notify = notices()
    open_store(notify=notify).close()
    assert env.normalise(seen[0]) == snapshot


def test_garbage_without_key_check_is_a_wrong_key_not_corruption(env) -> None:
    """Without proof that the key is right, a page-1 failure is never treated as damage."""
    _fill(env, 1)
    key_check_path(env.db_path).unlink()
    env.db_path.write_bytes(os.urandom(2 * PAGE_SIZE))
    with pytest.raises(WrongKeyError):
        open_store()
    assert not list(env.db_path.parent.glob("*.corrupt-*"))


def test_damaged_inner_page_is_found_by_verify(env) -> None:
    _fill(env)
    with env.db_path.open("r+b") as handle:
        handle.seek(10 * PAGE_SIZE + 100)
        handle.write(os.urandom(64))
    seen, notify = notices()
    # A plain open only reads the schema, so it still succeeds...
    open_store(notify=notify).close()
    assert seen == []
    # ...while verify=True reads every page and moves the file aside.
    with open_store(verify=True, notify=notify) as store:
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)
    assert len(seen) == 1 and "quick_check" in seen[0]


def test_pragmas_are_set_on_every_connection(env) -> None:
    with open_store() as store:
        conn = store.conn
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


def test_reopening_applies_no_migration_twice(env) -> None:
    open_store().close()
    with open_store() as store:
        rows = store.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    from capy.store import MIGRATIONS

    assert rows == (len(MIGRATIONS),)
    conn = connect(env.db_path, env.key())
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()


def test_a_new_database_and_its_wal_are_readable_by_their_owner_only(env) -> None:
    """Whatever the umask and whoever made the folder: the file is encrypted, and its mode
    keeps even its size and timing from other users."""
    env.db_path.parent.mkdir(parents=True, exist_ok=True)
    env.db_path.parent.chmod(0o755)  # a folder made by something other than capy
    previous = os.umask(0o022)
    try:
        with open_store() as store:
            store.conn.execute("CREATE TABLE IF NOT EXISTS mode_probe (x)")
            store.conn.execute("INSERT INTO mode_probe VALUES (1)")
            store.conn.commit()
            made = [env.db_path, env.db_path.with_name(env.db_path.name + "-wal")]
            assert all(path.exists() for path in made)
            assert {oct(path.stat().st_mode & 0o777) for path in made} == {"0o600"}
    finally:
        os.umask(previous)
