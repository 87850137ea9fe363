"""Checkpoint, sizes, encrypting a plaintext database and rotating keys, on real files."""

from __future__ import annotations

import sqlite3

import pytest

from capy.store import (
    EncryptError,
    PlaintextDatabaseError,
    WrongKeyError,
    locate_store,
    open_store,
)
from capy.store.database import SQLITE_HEADER
from capy.store.keys import DatabaseKey, KeySource
from capy.store.maintenance import checkpoint, database_sizes, encrypt_store

NEW_KEY = "d4" * 32


def _key(hex_key: str) -> DatabaseKey:
    return DatabaseKey(bytes.fromhex(hex_key), KeySource(name="db", label="test"))


def test_checkpoint_moves_wal_into_file_and_truncates(env) -> None:
    with open_store() as store:
        for number in range(20):
            store.conn.execute(
                "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
                "VALUES (?, 'durable', 'h', 'plaintext', randomblob(5000), 5000)",
                (f"s{number}",),
            )
        wal = env.db_path.with_name("knowledge.db-wal")
        assert wal.stat().st_size > 0
        result = checkpoint(store.conn)
        assert result.wal_frames > 0 and result.checkpointed == result.wal_frames
        assert result.truncated
        assert wal.stat().st_size == 0


def test_sizes_group_fts_shadow_tables(env) -> None:
    env.add_source("big", body=b"x" * 50_000)
    with open_store() as store:
        report = database_sizes(store.conn, store.path)
    by_name = {table.name: table for table in report.tables}
    assert set(by_name) >= {"sources", "chunks", "chunks_trigram", "vocabulary", "meta"}
    assert not any(name.startswith("chunks_data") for name in by_name)
    assert by_name["sources"].rows == 1 and by_name["sources"].bytes >= 50_000
    assert report.file_bytes + report.wal_bytes >= 50_000
    assert report.page_size == 4096 and report.method in ("dbstat", "payload")


def _plaintext_database(env) -> None:
    env.db_path.parent.mkdir(parents=True)
    plain = sqlite3.connect(env.db_path)
    plain.execute("CREATE TABLE notes (body TEXT)")
    plain.executemany("INSERT INTO notes VALUES (?)", [(f"note {n}",) for n in range(500)])
    plain.commit()
    plain.close()


def test_encrypting_a_plaintext_database_keeps_data_and_a_backup(env) -> None:
    _plaintext_database(env)
    with pytest.raises(PlaintextDatabaseError):
        open_store()
    outcome = encrypt_store(locate_store())
    result = outcome.result
    assert result.was_plaintext and result.row_counts == {"notes": 500}
    assert env.db_path.read_bytes()[:16] != SQLITE_HEADER
    assert result.backup.read_bytes()[:16] == SQLITE_HEADER  # the original, untouched
    with open_store() as store:  # opens with the generated key, and is migrated on open
        assert store.conn.execute("SELECT count(*) FROM notes").fetchone() == (500,)
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)
        assert store.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_rotating_the_key_file_round_trip(env) -> None:
    env.add_source("alpha")
    env.add_source("beta")
    old_key = env.key()
    outcome = encrypt_store(locate_store(), generate=True)
    new_key = env.key()
    assert new_key.raw != old_key.raw
    assert outcome.key_file == env.key_file
    assert bytes.fromhex(outcome.old_key_backup.read_text().strip()) == old_key.raw
    assert env.labels(new_key) == ["alpha", "beta"]
    assert env.labels(old_key, path=outcome.result.backup) == ["alpha", "beta"]
    assert not list(env.key_file.parent.glob("*.next"))
    with open_store() as store:
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (2,)


def test_rotating_an_env_key_needs_the_new_key(env, monkeypatch) -> None:
    monkeypatch.setenv("CAPY_DB_KEY", "e5" * 32)
    env.add_source("gamma")
    with pytest.raises(EncryptError, match="--new-key-file"):
        encrypt_store(locate_store(), generate=True)
    outcome = encrypt_store(locate_store(), NEW_KEY, "key file new.key")
    assert outcome.set_env_var == "CAPY_DB_KEY"
    with pytest.raises(WrongKeyError):
        open_store()
    monkeypatch.setenv("CAPY_DB_KEY", NEW_KEY)
    assert env.labels(_key(NEW_KEY)) == ["gamma"]
    open_store().close()


def test_encrypt_refuses_without_a_new_key_or_while_in_use(env) -> None:
    env.add_source("delta")
    with pytest.raises(EncryptError, match="already encrypted"):
        encrypt_store(locate_store())
    # another connection holds the file open
    with open_store(), pytest.raises(EncryptError, match="in use"):
        encrypt_store(locate_store(), generate=True)
    assert env.labels() == ["delta"]


def test_encrypt_with_the_same_key_is_refused(env) -> None:
    env.add_source("epsilon")
    with pytest.raises(EncryptError, match="same as the current"):
        encrypt_store(locate_store(), env.key_file.read_text(), "same")


def test_a_rotated_store_stays_private_to_its_owner(env) -> None:
    """capy makes every store file 0600; the re-encrypted copy that replaces it was left at
    the umask's mode (0644 by default)."""
    import os
    import stat

    env.add_source("alpha")
    path = locate_store().path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    previous = os.umask(0o022)
    try:
        encrypt_store(locate_store(), generate=True)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
