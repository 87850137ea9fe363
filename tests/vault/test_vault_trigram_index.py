"""The vault's trigram table is an index only (migration 0007): a message's text is stored once,
in `messages`; substring search still finds every message, and deleting or replacing a session
still takes its rows out of the trigram list. The migration rebuilds an older vault's table in
one transaction: a process killed in the middle leaves the old, searchable vault."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from capy.store.database import open_database
from capy.store.keys import load_key
from capy.store.migrations import applied_migrations, chunk_rowid_range, migrate
from capy.vault import Vault, locate_vault, open_vault
from capy.vault.corpus import search_vault
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.schema import MIGRATIONS
from capy.vault.upkeep import delete_session

CONTENTLESS = "0007-contentless-trigram"
# Substrings of the shared transcripts (parts of words: only the trigram list finds them).
QUERIES = ("ubproces", "RetryConfig", "pytest", "Traceback", "jsonl", "ettings")


def open_older_vault(vault_path) -> Vault:
    """The vault as a capy before 0007 made it: every migration up to 0007's predecessor."""
    location = locate_vault(vault_path)
    key = load_key(location.key_source)
    before = [migration.name for migration in MIGRATIONS].index(CONTENTLESS)
    conn = open_database(vault_path, key, migrator=lambda conn: migrate(conn, MIGRATIONS[:before]))
    return Vault(conn=conn, location=location, key=key)


def has_text_copy(vault: Vault) -> bool:
    return bool(
        vault.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'messages_trigram_content'"
        ).fetchone()
    )


def trigram_rowids(vault: Vault, phrase: str) -> list[int]:
    rows = vault.conn.execute(
        "SELECT rowid FROM messages_trigram WHERE messages_trigram MATCH ? ORDER BY rowid",
        (f'"{phrase}"',),
    )
    return [row[0] for row in rows]


def hits(vault: Vault) -> list[list[tuple]]:
    return [
        [(hit.chunk_id, hit.title, hit.content, hit.layer, round(hit.score, 9)) for hit in r.hits]
        for r in search_vault(vault, QUERIES, limit=10)
    ]


def test_the_trigram_table_stores_no_copy_of_the_text(imported) -> None:
    vault, _ = imported
    conn = vault.conn
    assert not has_text_copy(vault)
    # A contentless table reads back no column: the text lives in `messages` alone.
    assert conn.execute(
        "SELECT count(*) FROM messages_trigram WHERE title IS NOT NULL OR body IS NOT NULL"
    ).fetchone() == (0,)
    assert (
        conn.execute("SELECT rowid FROM messages_trigram ORDER BY rowid").fetchall()
        == conn.execute("SELECT rowid FROM messages ORDER BY rowid").fetchall()
    )
    # Every trigram hit is shown with its message's text, read from `messages`.
    found = [hit for result in search_vault(vault, QUERIES, limit=10) for hit in result.hits]
    assert found and all(hit.content or hit.title for hit in found)


def test_migration_keeps_search_results_and_deletes(vault_path, claude_transcripts) -> None:
    with open_older_vault(vault_path) as vault:
        import_sessions(vault, ImportOptions(source=claude_transcripts))
        assert has_text_copy(vault)  # the old shape really held a second copy
        before = hits(vault)
        substrings = {phrase: trigram_rowids(vault, phrase) for phrase in QUERIES}
    assert any(substrings.values())
    with open_vault(vault_path) as vault:
        assert applied_migrations(vault.conn)[-1] == CONTENTLESS
        assert not has_text_copy(vault)
        assert hits(vault) == before
        assert {phrase: trigram_rowids(vault, phrase) for phrase in QUERIES} == substrings
        assert migrate(vault.conn, MIGRATIONS) == []  # applied once
        # Deleting a session (its trigger) takes its rows out of the contentless table too.
        session_rowid, session_id = vault.conn.execute(
            "SELECT id, session_id FROM sessions ORDER BY message_count DESC LIMIT 1"
        ).fetchone()
        first, last = chunk_rowid_range(session_rowid)
        delete_session(vault, session_id)
        left = vault.conn.execute(
            "SELECT count(*) FROM messages_trigram WHERE rowid BETWEEN ? AND ?", (first, last)
        ).fetchone()
        assert left == (0,)
        for phrase in QUERIES:
            assert not [row for row in trigram_rowids(vault, phrase) if first <= row <= last]


KILLED_MIGRATION = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from capy.store.database import open_database
    from capy.store.keys import load_key
    from capy.store.migrations import Migration, migrate
    from capy.vault import locate_vault
    from capy.vault.schema import MIGRATIONS

    def die(conn):  # after the new index is built, before the transaction commits
        os.kill(os.getpid(), signal.SIGKILL)

    dying = [m if m.name != sys.argv[2] else Migration(m.name, m.sql, then=die) for m in MIGRATIONS]
    location = locate_vault(Path(sys.argv[1]))
    open_database(location.path, load_key(location.key_source),
                  migrator=lambda conn: migrate(conn, dying))
    """
)


def test_a_migration_killed_midway_leaves_the_old_searchable_vault(
    vault_path, claude_transcripts
) -> None:
    with open_older_vault(vault_path) as vault:
        import_sessions(vault, ImportOptions(source=claude_transcripts))
        before = hits(vault)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MIGRATION, str(vault_path), CONTENTLESS],
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    with open_older_vault(vault_path) as vault:  # opened without applying 0007
        assert CONTENTLESS not in applied_migrations(vault.conn)
        assert has_text_copy(vault)
        assert hits(vault) == before
    with open_vault(vault_path) as vault:  # the next open completes it
        assert applied_migrations(vault.conn)[-1] == CONTENTLESS
        assert not has_text_copy(vault)
        assert hits(vault) == before
