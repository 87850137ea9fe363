"""`capy vault delete | checkpoint | compact | rekey | resume`, through the commands a person
runs, on real vault files."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from capy.cli import vault_upkeep as cli
from capy.cli.vault import import_
from capy.store.errors import WrongKeyError
from capy.vault import open_vault
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.restore import restore_session

SPOTTER_SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def test_delete_removes_a_session_its_rows_and_unshared_files(
    imported, tmp_path, claude_transcripts, capsys
):
    vault, _ = imported
    before = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert cli.delete(SPOTTER_SESSION, path=vault.path) == 2  # not a terminal: --yes needed
    assert "pass --yes" in capsys.readouterr().err

    assert cli.delete(SPOTTER_SESSION, yes=True, path=vault.path) == 0
    assert capsys.readouterr().out.startswith(f"deleted claude-code:{SPOTTER_SESSION}: 3 files")
    conn = vault.conn
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == before - 1
    orphans = conn.execute(
        "SELECT count(*) FROM blobs WHERE hash NOT IN (SELECT blob_hash FROM session_files)"
    ).fetchone()[0]
    assert orphans == 0

    # What is left equals a vault that never held the session, vocabulary counts included.
    others = tmp_path / "others"
    for path in claude_transcripts.rglob("*.jsonl"):
        if SPOTTER_SESSION not in str(path):
            target = others / path.relative_to(claude_transcripts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    with open_vault(tmp_path / "fresh.db") as fresh:
        import_sessions(fresh, ImportOptions(source=others))
        vocabulary = "SELECT term, frequency FROM vocabulary WHERE frequency > 0 ORDER BY term"
        messages = "SELECT count(*) FROM messages"
        for query in (vocabulary, messages):
            assert fresh.conn.execute(query).fetchall() == conn.execute(query).fetchall()


def test_compact_recompresses_shrinks_the_file_and_restores_byte_for_byte(
    imported, tmp_path, claude_transcripts, capsys, sha256
):
    from capy.vault.upkeep import delete_session

    vault, _ = imported
    delete_session(vault, SPOTTER_SESSION)  # leaves free pages and FTS tombstones behind
    assert cli.compact(path=vault.path, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["recompressed"] > 0
    assert report["stored_after"] < report["stored_before"]
    assert report["file_after"] < report["file_before"] / 2
    assert vault.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    restored = restore_session(vault, "tool_heavy", tmp_path / "out")
    assert sha256(restored[0].path) == sha256(claude_transcripts / "spotter" / "tool_heavy.jsonl")
    hits = vault.conn.execute("SELECT count(*) FROM messages WHERE messages MATCH 'bash'")
    assert hits.fetchone()[0] > 0  # the merged index still answers
    assert cli.compact(path=vault.path, as_json=True) == 0  # nothing smaller left to gain
    assert json.loads(capsys.readouterr().out)["recompressed"] == 0


def test_checkpoint_empties_the_wal(imported, capsys):
    vault, _ = imported
    wal = vault.path.with_name(vault.path.name + "-wal")
    vault.close()  # the command opens its own connection
    assert cli.checkpoint(path=vault.path) == 0
    assert capsys.readouterr().out.endswith("; truncated\n")
    assert not wal.exists() or wal.stat().st_size == 0


def test_rekey_swaps_in_a_verified_copy_and_keeps_the_old_file(
    vault_path, tmp_path, session_writer, monkeypatch, capsys
):
    old, new = "1f" * 32, "2e" * 32
    monkeypatch.setenv("CAPY_VAULT_KEY", old)
    session_writer(tmp_path / "sessions", "keyed", turns=2)
    assert import_(source=tmp_path / "sessions", path=vault_path) == 0
    monkeypatch.setenv("CAPY_NEW_VAULT_KEY", new)

    assert cli.rekey(path=vault_path) == 0
    out = capsys.readouterr().out
    assert "re-encrypted with the new key" in out and "now set CAPY_VAULT_KEY" in out
    assert old not in out and new not in out
    (backup,) = vault_path.parent.glob("vault.db.backup-*")
    with pytest.raises(WrongKeyError):
        open_vault(vault_path)  # still the old key in CAPY_VAULT_KEY
    with open_vault(backup) as before:  # the backup opens with the old key, untouched
        assert before.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
    monkeypatch.setenv("CAPY_VAULT_KEY", new)
    with open_vault(vault_path) as after:
        assert after.conn.execute("SELECT count(*) FROM messages").fetchone()[0] > 0


def test_rekey_to_the_same_key_changes_nothing(vault_path, monkeypatch, capsys):
    monkeypatch.setenv("CAPY_VAULT_KEY", "3d" * 32)
    monkeypatch.setenv("CAPY_NEW_VAULT_KEY", "3d" * 32)
    open_vault(vault_path).close()
    before = vault_path.read_bytes()
    assert cli.rekey(path=vault_path) == 2
    assert capsys.readouterr().err == (
        "capy: the new key is the same as the current one; nothing to do\n"
    )
    assert vault_path.read_bytes() == before


def test_resume_restores_and_prints_the_platforms_command(
    vault_path, tmp_path, session_writer, capsys
):
    original = session_writer(tmp_path / "sessions", "resumable", turns=1)
    import_(source=original.parent, path=vault_path)
    capsys.readouterr()
    original.unlink()
    assert cli.resume("resumable", path=vault_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"restored: {original}", "claude --resume resumable"]  # /home/dev/demo: absent
    assert original.is_file()


def test_resume_run_runs_the_agent_in_the_sessions_folder(
    vault_path, tmp_path, session_writer, monkeypatch
):
    original = session_writer(tmp_path / "sessions", "rerun", turns=1)
    import_(source=original.parent, path=vault_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "called.txt"
    fake = bin_dir / "claude"  # stands in for the agent: records how it was called
    fake.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        f"open({str(record)!r}, 'w').write(' '.join(sys.argv[1:]) + '|' + os.getcwd())\n"
        "sys.exit(3)\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert cli.resume("rerun", run_=True, path=vault_path) == 3  # the agent's own exit code
    assert record.read_text().split("|")[0] == "--resume rerun"


def test_resume_without_the_agent_installed_is_one_line(
    vault_path, tmp_path, session_writer, monkeypatch, capsys
):
    original = session_writer(tmp_path / "sessions", "noagent", turns=1)
    import_(source=original.parent, path=vault_path)
    capsys.readouterr()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cli.resume("noagent", run_=True, path=vault_path) == 2
    assert capsys.readouterr().err == (
        "capy: cannot run 'claude': it is not on PATH; install the agent or run it yourself\n"
    )


def test_reindex_command_reports_and_stats_shows_the_backlog(imported, capsys):
    from capy.cli.vault import stats

    vault, _ = imported
    vault.conn.execute("UPDATE sessions SET index_version = 'older-rules'")
    total = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert stats(path=vault.path) == 0
    assert f"reindex backlog: {total} sessions" in capsys.readouterr().out
    assert cli.reindex(path=vault.path, as_json=True) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == total
    assert stats(path=vault.path) == 0
    assert "reindex backlog: 0 sessions" in capsys.readouterr().out


def test_merge_command_reads_the_other_key_from_a_file(
    vault_path, tmp_path, session_writer, monkeypatch, capsys
):
    other_key = tmp_path / "other.key"
    other_key.write_text("4c" * 32 + "\n")
    other_key.chmod(0o600)
    monkeypatch.setenv("CAPY_VAULT_KEY", "4c" * 32)
    session_writer(tmp_path / "there", "travelled", turns=2)
    other = tmp_path / "other" / "vault.db"
    assert import_(source=tmp_path / "there", path=other, as_json=True) == 0
    monkeypatch.setenv("CAPY_VAULT_KEY", "5d" * 32)
    capsys.readouterr()

    assert cli.merge(from_=other, path=vault_path) == 2  # this vault's key does not open it
    error = capsys.readouterr().err
    assert "encrypted with a different key" in error and "--from-key-file" in error
    assert cli.merge(from_=other, from_key_file=other_key, path=vault_path) == 0
    assert capsys.readouterr().out == f"merged {other}: 1 imported; 6 messages indexed\n"
    assert cli.merge(from_=other, from_key_file=other_key, path=vault_path) == 0
    assert capsys.readouterr().out == f"merged {other}: 1 unchanged; 0 messages indexed\n"
