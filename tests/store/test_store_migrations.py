"""Named migrations: an empty database migrates to the snapshotted schema, once."""

from __future__ import annotations

import pytest

from capy.store import MIGRATIONS, chunk_rowid, chunk_rowid_range, migrate, open_store
from capy.store.chunkstore import insert_fts_rows
from capy.store.database import connect, transaction
from capy.store.keys import key_source, load_key
from capy.store.migrations import CHUNK_ORDINAL_BITS, split_statements


def test_empty_database_migrates_to_the_known_schema(env, snapshot) -> None:
    key = load_key(key_source("db", None, env.key_file.parent))
    conn = connect(env.home / "empty.db", key)
    applied = migrate(conn)
    assert applied == [migration.name for migration in MIGRATIONS]
    schema = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name"
    ).fetchall()
    assert "\n\n".join(f"-- {kind} {name}\n{sql}" for kind, name, sql in schema) == snapshot
    assert migrate(conn) == []  # idempotent
    conn.close()


def test_a_database_a_newer_capy_migrated_is_refused_in_one_sentence(env) -> None:
    from capy.store.errors import NewerSchemaError

    with open_store() as store, transaction(store.conn) as conn:
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('9999-from-a-newer-capy')")
    with pytest.raises(NewerSchemaError) as refused:
        open_store()
    message = refused.value.message
    assert "newer capy" in message and "9999-from-a-newer-capy" in message
    assert "upgrade capy" in message and "\n" not in message


def test_migration_names_are_unique_and_ordered() -> None:
    names = [migration.name for migration in MIGRATIONS]
    assert names == sorted(set(names))


def test_split_keeps_trigger_bodies_whole() -> None:
    statements = split_statements(MIGRATIONS[2].sql)
    assert [statement.split()[:3] for statement in statements] == [
        ["CREATE", "VIRTUAL", "TABLE"],
        ["CREATE", "VIRTUAL", "TABLE"],
        ["CREATE", "TRIGGER", "sources_delete_chunks"],
    ]


def test_sources_constraints(env) -> None:
    import sqlcipher3

    with open_store() as store:
        insert = (
            "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
            "VALUES (?, ?, 'h', 'plaintext', x'00', 1)"
        )
        store.conn.execute(insert, ("a", "durable"))
        store.conn.execute(insert, ("a", "ephemeral"))  # same label, other lifetime: allowed
        with pytest.raises(sqlcipher3.IntegrityError):
            store.conn.execute(insert, ("a", "durable"))
        with pytest.raises(sqlcipher3.IntegrityError):
            store.conn.execute(insert, ("b", "forever"))


def test_deleting_a_source_deletes_its_chunks_in_both_indexes(env) -> None:
    with open_store() as store, transaction(store.conn) as conn:
        for source_id in (1, 2):
            conn.execute(
                "INSERT INTO sources (id, label, kind, content_hash, content_type, raw, raw_size)"
                " VALUES (?, ?, 'durable', 'h', 'plaintext', x'00', 1)",
                (source_id, f"s{source_id}"),
            )
            rows = [
                (chunk_rowid(source_id, ordinal), "title", "needle haystack", source_id, ordinal)
                for ordinal in range(3)
            ]
            for table in ("chunks", "chunks_trigram"):
                insert_fts_rows(conn, table, rows)
        conn.execute("DELETE FROM sources WHERE id = 1")
        for table in ("chunks", "chunks_trigram"):
            left = conn.execute(f"SELECT DISTINCT rowid >> 20 FROM {table}").fetchall()
            assert left == [(2,)]
        assert conn.execute("SELECT count(*) FROM chunks WHERE chunks MATCH 'haystacks'").fetchone()
        # The three chunks of source 2 are one block of the trigram table (migration 0011).
        assert conn.execute(
            "SELECT count(*) FROM chunks_trigram WHERE chunks_trigram MATCH 'ayst'"
        ).fetchone() == (1,)


def test_rowid_scheme_matches_the_trigger() -> None:
    assert CHUNK_ORDINAL_BITS == 20  # the trigger in 0003-chunks hard-codes 20 and 1048575
    assert chunk_rowid_range(3) == (3 << 20, (3 << 20) + 1048575)
    assert chunk_rowid(3, 5) == (3 << 20) + 5
    with pytest.raises(ValueError):
        chunk_rowid(1, 1 << 20)


def test_vocabulary_word_parts_migration_recounts_every_chunk(env) -> None:
    from capy.store.indexing import index_content

    with open_store() as store:
        index_content(store, "retry max_chunk_bytes twice, retry", label="notes")
        # The state an older capy left: whole identifiers in the vocabulary, 0005 not applied.
        with transaction(store.conn) as conn:
            conn.execute("DELETE FROM vocabulary")
            conn.execute("INSERT INTO vocabulary (term, frequency) VALUES ('max_chunk_bytes', 1)")
            conn.execute("DELETE FROM schema_migrations WHERE name = '0005-vocabulary-word-parts'")
        assert migrate(store.conn) == ["0005-vocabulary-word-parts"]
        terms = dict(store.conn.execute("SELECT term, frequency FROM vocabulary").fetchall())
        assert terms["retry"] == 2 and terms["chunk"] == 1 and terms["bytes"] == 1
        assert "max_chunk_bytes" not in terms


def test_contentless_trigram_migration_keeps_every_chunk_findable(env) -> None:
    """0009 rebuilds the trigram table as an index only, from the chunks an 0008 store holds."""
    key = load_key(key_source("db", None, env.key_file.parent))
    conn = connect(env.home / "old.db", key)
    before = [migration.name for migration in MIGRATIONS].index("0009-contentless-trigram")
    migrate(conn, MIGRATIONS[:before])
    with transaction(conn):
        for source_id in (1, 2):
            conn.execute(
                "INSERT INTO sources (id, label, kind, content_hash, content_type, raw, raw_size)"
                " VALUES (?, ?, 'durable', 'h', 'plaintext', x'00', 1)",
                (source_id, f"s{source_id}"),
            )
            for ordinal in range(2):
                for table in ("chunks", "chunks_trigram"):  # the 0008 shape: both store text
                    conn.execute(
                        f"INSERT INTO {table} (rowid, title, content, source_id, ordinal) "
                        "VALUES (?, 'RetryConfig', 'a haystack of words', ?, ?)",
                        (chunk_rowid(source_id, ordinal), source_id, ordinal),
                    )
    assert migrate(conn, MIGRATIONS[: before + 1]) == ["0009-contentless-trigram"]
    found = conn.execute(
        "SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH 'ayst AND tryconf' "
        "ORDER BY rowid"
    ).fetchall()
    assert found == conn.execute("SELECT rowid FROM chunks ORDER BY rowid").fetchall()
    assert not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'chunks_trigram_content'"
    ).fetchone()
    with transaction(conn):
        conn.execute("DELETE FROM sources WHERE id = 1")  # the rebuilt trigger still cascades
    assert conn.execute("SELECT DISTINCT rowid >> 20 FROM chunks_trigram").fetchall() == [(2,)]
    conn.close()


def test_trigram_blocks_migration_finds_the_same_chunks(env) -> None:
    """0011 rebuilds the trigram table a block of 16 chunks a row, from the chunks an 0010 store
    holds; a deleted source still takes its blocks with it."""
    from capy.retrieval import SearchFilters
    from capy.rules import build_ruleset
    from capy.store.corpus import StoreCorpus

    key = load_key(key_source("db", None, env.key_file.parent))
    path = env.home / "old.db"
    conn = connect(path, key)
    before = [migration.name for migration in MIGRATIONS].index("0011-trigram-blocks")
    migrate(conn, MIGRATIONS[:before])
    with transaction(conn):
        for source_id, count in ((1, 20), (2, 3)):
            conn.execute(
                "INSERT INTO sources (id, label, kind, content_hash, content_type, raw, raw_size)"
                " VALUES (?, ?, 'durable', 'h', 'plaintext', x'00', 1)",
                (source_id, f"s{source_id}"),
            )
            for ordinal in range(count):
                content = "RetryConfig here" if (source_id, ordinal) == (1, 17) else "filler"
                rowid = chunk_rowid(source_id, ordinal)
                conn.execute(
                    "INSERT INTO chunks (rowid, title, content, source_id, ordinal) "
                    "VALUES (?, 't', ?, ?, ?)",
                    (rowid, content, source_id, ordinal),
                )
                conn.execute(  # the 0010 shape: a trigram row per chunk
                    "INSERT INTO chunks_trigram (rowid, title, content) VALUES (?, 't', ?)",
                    (rowid, content),
                )
    assert migrate(conn) == ["0011-trigram-blocks"]
    assert conn.execute("SELECT rowid FROM chunks_trigram ORDER BY rowid").fetchall() == [
        (chunk_rowid(1, 0),),
        (chunk_rowid(1, 16),),
        (chunk_rowid(2, 0),),
    ]
    conn.close()
    with open_store(db_path=path) as store:
        corpus = StoreCorpus(
            store, default_kinds=("durable",), bm25=build_ruleset().view("search").bm25
        )
        found = corpus.match("trigram", '"tryconf"', 10, SearchFilters())
        assert [candidate.chunk_id for candidate in found] == [chunk_rowid(1, 17)]
        with transaction(store.conn):
            store.conn.execute("DELETE FROM sources WHERE id = 1")
        left = store.conn.execute("SELECT rowid FROM chunks_trigram").fetchall()
        assert left == [(chunk_rowid(2, 0),)]
