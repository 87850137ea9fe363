"""`capy vault reindex`: stale rows rebuilt from the blobs alone, identical to an import's; a
process SIGKILLed mid-reindex leaves a sound vault that completes on the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from capy.rules import load_rules
from capy.vault import open_vault
from capy.vault.catalog import vault_stats
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.reindex import BATCH_SESSIONS, reindex_vault

REINDEXER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from capy.vault import open_vault
    from capy.vault.reindex import reindex_vault

    def progress(done, total):
        print(f"done {done} of {total}", flush=True)

    with open_vault(Path(sys.argv[1])) as vault:
        reindex_vault(vault, progress=progress)
    """
)


def index_state(vault) -> tuple[list, dict, list]:
    """Message rows, vocabulary and blobs, as comparable values."""
    conn = vault.conn
    rows = conn.execute(
        "SELECT rowid, title, body, role, timestamp, index_version FROM messages ORDER BY rowid"
    ).fetchall()
    trigram = conn.execute("SELECT rowid FROM messages_trigram ORDER BY rowid")
    assert [row[:1] for row in rows] == trigram.fetchall()  # both lists hold the same rows
    vocabulary = dict(conn.execute("SELECT term, frequency FROM vocabulary WHERE frequency > 0"))
    blobs = conn.execute("SELECT hash, size, encoding, data FROM blobs ORDER BY hash").fetchall()
    return rows, vocabulary, blobs


def mark_stale(vault, where: str = "1") -> int:
    """What an older rules hash leaves behind: sessions and rows tagged with another version."""
    conn = vault.conn
    conn.execute(f"UPDATE sessions SET index_version = 'older-rules' WHERE {where}")
    conn.execute("UPDATE messages SET index_version = 'older-rules'")
    return conn.execute(
        "SELECT count(*) FROM sessions WHERE index_version = 'older-rules'"
    ).fetchone()[0]


def test_reindex_rebuilds_stale_rows_exactly_as_an_import_built_them(imported):
    vault, _ = imported
    version = load_rules().index_version
    rows, vocabulary, blobs = index_state(vault)
    assert rows and all(row[5] == version for row in rows)
    stale = mark_stale(vault)
    assert vault_stats(vault, version)["reindex_backlog"] == stale > 1

    report = reindex_vault(vault)

    assert report.sessions == stale and not report.failed
    assert report.messages == len(rows)
    assert index_state(vault) == (rows, vocabulary, blobs)  # blobs untouched, rows identical
    assert vault_stats(vault, version)["reindex_backlog"] == 0
    assert reindex_vault(vault).sessions == 0  # nothing stale left


def test_reindex_touches_only_stale_sessions_unless_asked_for_all(imported):
    vault, _ = imported
    first = vault.conn.execute("SELECT min(id) FROM sessions").fetchone()[0]
    assert mark_stale(vault, f"id = {first}") == 1
    assert reindex_vault(vault).sessions == 1
    total = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert reindex_vault(vault, everything=True).sessions == total


def test_reindex_reports_a_corrupt_blob_and_rebuilds_the_others(imported):
    vault, _ = imported
    mark_stale(vault)
    victim = vault.conn.execute(
        "SELECT s.session_id, f.blob_hash FROM sessions s JOIN session_files f ON f.session = s.id "
        "ORDER BY s.id LIMIT 1"
    ).fetchone()
    vault.conn.execute("UPDATE blobs SET data = x'00' WHERE hash = ?", (victim[1],))
    total = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]

    report = reindex_vault(vault)

    assert [item["session"].endswith(victim[0]) for item in report.failed] == [True]
    assert "no longer matches its hash" in report.failed[0]["reason"]
    assert report.sessions == total - 1


def test_sigkill_mid_reindex_leaves_a_sound_vault_that_completes(
    vault_path, claude_transcripts, tmp_path, monkeypatch
):
    monkeypatch.setenv("CAPY_VAULT_KEY", "d" * 64)
    data = (claude_transcripts / "spotter" / "tool_heavy.jsonl").read_bytes()
    source = tmp_path / "sessions"
    source.mkdir()
    copies = BATCH_SESSIONS * 3
    for number in range(copies):
        (source / f"copy-{number}.jsonl").write_bytes(data + f'"copy {number}"\n'.encode())
    with open_vault(vault_path) as vault:
        import_sessions(vault, ImportOptions(source=source))
        expected = index_state(vault)
        assert mark_stale(vault) == copies
    child = subprocess.Popen(
        [sys.executable, "-c", REINDEXER, str(vault_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith(f"done {BATCH_SESSIONS} of {copies}")
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

    version = load_rules().index_version
    with open_vault(vault_path, verify=True) as vault:
        assert vault.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        backlog = vault_stats(vault, version)["reindex_backlog"]
        assert 0 < backlog <= copies - BATCH_SESSIONS  # the first batch stayed done
        assert reindex_vault(vault).sessions == backlog
        assert vault_stats(vault, version)["reindex_backlog"] == 0
        assert index_state(vault) == expected
