"""Wrong key, plaintext file, newer vault, corrupt blob: one clear error each, nothing lost."""

from __future__ import annotations

import sqlite3

import pytest

from capy.store.errors import PlaintextDatabaseError, WrongKeyError
from capy.vault import open_vault
from capy.vault.errors import CorruptBlobError, NewerVaultError
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.restore import restore_session

KEY_A = "a" * 64
KEY_B = "b" * 64


def test_wrong_key_is_a_clear_error_and_the_file_is_untouched(vault_path, monkeypatch):
    monkeypatch.setenv("CAPY_VAULT_KEY", KEY_A)
    open_vault(vault_path).close()
    before = vault_path.read_bytes()
    monkeypatch.setenv("CAPY_VAULT_KEY", KEY_B)
    with pytest.raises(WrongKeyError, match="CAPY_VAULT_KEY") as caught:
        open_vault(vault_path)
    assert KEY_B not in caught.value.message and KEY_A not in caught.value.message
    assert vault_path.read_bytes() == before


def test_a_plaintext_file_is_refused_and_left_alone(vault_path):
    vault_path.parent.mkdir(parents=True)
    with sqlite3.connect(vault_path) as plain:
        plain.execute("CREATE TABLE t (x)")
    before = vault_path.read_bytes()
    with pytest.raises(PlaintextDatabaseError, match=r"unencrypted.*--path"):
        open_vault(vault_path)
    assert vault_path.read_bytes() == before


def test_a_newer_vault_is_refused_by_an_older_capy(vault_path):
    with open_vault(vault_path) as vault:
        vault.conn.execute("UPDATE meta SET value = '99' WHERE key = 'min_reader_version'")
    with pytest.raises(NewerVaultError, match=r"reader version 99.*upgrade capy"):
        open_vault(vault_path)


def test_a_corrupt_blob_is_reported_not_restored(vault_path, tmp_path, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "damaged", turns=2)
    with open_vault(vault_path) as vault:
        import_sessions(vault, ImportOptions(source=source))
        vault.conn.execute("UPDATE blobs SET data = zeroblob(length(data))")
        with pytest.raises(CorruptBlobError, match="no longer matches its hash"):
            restore_session(vault, "damaged", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_migrations_build_the_documented_schema(vault_path):
    from capy.store.migrations import applied_migrations
    from capy.vault.schema import MIGRATIONS

    with open_vault(vault_path) as vault:
        assert applied_migrations(vault.conn) == [m.name for m in MIGRATIONS]
        tables = {
            row[0]
            for row in vault.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    assert {"meta", "blobs", "sessions", "session_files", "messages", "vocabulary"} <= tables
