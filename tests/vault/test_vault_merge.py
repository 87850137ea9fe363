"""`capy vault merge`: a union with another vault equals importing both; twice is a no-op; the
other vault is never written; a wrong key is one clear error."""

from __future__ import annotations

import pytest

from capy.store.errors import WrongKeyError
from capy.store.keys import DatabaseKey, KeySource
from capy.vault import open_vault
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.merge import merge_vault

KEY_A, KEY_B = "a1" * 32, "b2" * 32


def vault_key(hex_key: str) -> DatabaseKey:
    return DatabaseKey(bytes.fromhex(hex_key), KeySource(name="vault", label="test key"))


def contents(vault) -> dict:
    """Everything a vault holds, without rowids and import times (each vault's own)."""
    conn = vault.conn
    sessions = conn.execute(
        "SELECT platform, session_id, project, git_branch, model, title, started_at, ended_at, "
        "message_count, tool_call_count, malformed_lines, source_path, size, index_version "
        "FROM sessions ORDER BY platform, session_id"
    ).fetchall()
    files = conn.execute(
        "SELECT s.session_id, f.relpath, f.blob_hash FROM session_files f "
        "JOIN sessions s ON s.id = f.session ORDER BY 1, 2"
    ).fetchall()
    messages = conn.execute(
        "SELECT s.session_id, m.rowid & 1048575, m.title, m.body, m.role, m.timestamp, "
        "m.index_version FROM messages m JOIN sessions s ON s.id = m.rowid >> 20 ORDER BY 1, 2"
    ).fetchall()
    blobs = conn.execute("SELECT hash, size, encoding, data FROM blobs ORDER BY hash").fetchall()
    vocabulary = dict(conn.execute("SELECT term, frequency FROM vocabulary WHERE frequency > 0"))
    return {
        "sessions": sessions,
        "files": files,
        "messages": messages,
        "blobs": blobs,
        "vocabulary": vocabulary,
    }


@pytest.fixture
def two_vaults(tmp_path, claude_transcripts, monkeypatch):
    """Vault A holds the spotter sessions, vault B the claude-code-log ones (other key)."""
    paths = {}
    for name, folder, key in (("a", "spotter", KEY_A), ("b", "claude-code-log", KEY_B)):
        monkeypatch.setenv("CAPY_VAULT_KEY", key)
        paths[name] = tmp_path / name / "vault.db"
        with open_vault(paths[name]) as vault:
            report = import_sessions(vault, ImportOptions(source=claude_transcripts / folder))
            assert report.counts["imported"] > 0
    monkeypatch.setenv("CAPY_VAULT_KEY", KEY_A)
    return paths


def test_merge_equals_importing_both_and_twice_changes_nothing(
    two_vaults, tmp_path, claude_transcripts, sha256
):
    other_before = sha256(two_vaults["b"])
    with open_vault(two_vaults["a"]) as vault:
        first = merge_vault(vault, two_vaults["b"], vault_key(KEY_B))
        merged = contents(vault)
        again = merge_vault(vault, two_vaults["b"], vault_key(KEY_B))
        assert contents(vault) == merged
    assert first.outcomes["imported"] > 0 and first.messages > 0
    assert set(again.outcomes) == {"unchanged"} and again.messages == 0
    assert sha256(two_vaults["b"]) == other_before  # the other vault is only read

    with open_vault(tmp_path / "both" / "vault.db") as both:
        for folder in ("spotter", "claude-code-log"):
            import_sessions(both, ImportOptions(source=claude_transcripts / folder))
        assert contents(both) == merged


def test_merge_takes_the_larger_copy_and_keeps_a_larger_one(tmp_path, session_writer, monkeypatch):
    monkeypatch.setenv("CAPY_VAULT_KEY", KEY_A)
    small = session_writer(tmp_path / "small", "grows", turns=2)
    large = session_writer(tmp_path / "large", "grows", turns=4)
    paths = {name: tmp_path / name / "vault.db" for name in ("here", "there")}
    for name, source in (("here", small), ("there", large)):
        with open_vault(paths[name]) as vault:
            import_sessions(vault, ImportOptions(source=source.parent))
    with open_vault(paths["here"]) as here:
        assert merge_vault(here, paths["there"], vault_key(KEY_A)).outcomes == {"replaced": 1}
        size = here.conn.execute("SELECT size FROM sessions").fetchone()[0]
        assert size == large.stat().st_size
        assert here.conn.execute("SELECT count(*) FROM blobs").fetchone()[0] == 1  # old dropped
    with open_vault(paths["there"]) as there:  # the other way round: the larger stays
        assert merge_vault(there, paths["here"], vault_key(KEY_A)).outcomes == {"unchanged": 1}
        small_vault = tmp_path / "small-vault" / "vault.db"
        with open_vault(small_vault) as other:
            import_sessions(other, ImportOptions(source=small.parent))
        assert merge_vault(there, small_vault, vault_key(KEY_A)).outcomes == {"kept": 1}


def test_merge_with_the_wrong_key_is_one_clear_error(two_vaults, sha256):
    before = sha256(two_vaults["b"])
    with open_vault(two_vaults["a"]) as vault, pytest.raises(WrongKeyError) as raised:
        merge_vault(vault, two_vaults["b"], vault_key(KEY_A))
    assert "encrypted with a different key" in raised.value.message
    assert sha256(two_vaults["b"]) == before
