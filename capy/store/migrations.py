"""The knowledge base schema, as named migrations applied in order and recorded in a table.

A migration's name is never changed or reused once released; a schema change is a new entry at
the end of `MIGRATIONS`. Each one runs in its own `BEGIN IMMEDIATE` transaction and re-checks
`schema_migrations` inside it, so processes opening the same file at once apply it exactly once.

Conventions the indexer and the retrieval core rely on (documented here, next to the tables):
- Timestamps are INTEGER Unix seconds, UTC (`unixepoch()`), so retention can do arithmetic.
- A chunk's rowid is `chunk_rowid(source_id, ordinal)` in `chunks`; `chunks_trigram` (an index
  only since 0009: a chunk's text is read from `chunks`) holds blocks of 16 chunks since 0011,
  each under its first chunk's rowid, and its list is resolved to chunk rowids before the two
  ranked lists fuse by rowid. All chunks (and blocks) of one source form one rowid range, so
  replacing or deleting them is a range delete instead of a full FTS scan.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlcipher3

# Room for 2**20 (about a million) chunks per source; the retention pack caps sources far below.
CHUNK_ORDINAL_BITS = 20


def chunk_rowid(source_id: int, ordinal: int) -> int:
    """The rowid of chunk number `ordinal` (0-based) of a source, in both FTS tables."""
    if not 0 <= ordinal < 1 << CHUNK_ORDINAL_BITS:
        raise ValueError(f"chunk ordinal {ordinal} out of range")
    return (source_id << CHUNK_ORDINAL_BITS) | ordinal


def chunk_rowid_range(source_id: int) -> tuple[int, int]:
    """The inclusive rowid range holding every chunk of one source."""
    first = source_id << CHUNK_ORDINAL_BITS
    return first, first + (1 << CHUNK_ORDINAL_BITS) - 1


@dataclass(frozen=True)
class Migration:
    """One named step of the schema, applied once in a transaction."""

    name: str
    sql: str
    # Data work SQL cannot express, run after `sql` in the same transaction.
    then: Callable[[sqlcipher3.Connection], None] | None = None


def recount_vocabulary(conn: sqlcipher3.Connection) -> None:
    """Count the vocabulary again from every stored chunk, as the indexer counts it now."""
    from capy.store.vocabulary import apply_term_delta, term_counts

    conn.execute("DELETE FROM vocabulary")
    rows = conn.execute("SELECT title, content FROM chunks")
    apply_term_delta(conn, term_counts(text or "" for row in rows for text in row), Counter())


def rebuild_trigram_blocks(conn: sqlcipher3.Connection) -> None:
    from capy.store.trigram_blocks import rebuild_trigram_blocks as rebuild

    rebuild(conn)


def backfill_counters(conn: sqlcipher3.Connection) -> None:
    from capy.store.counters import backfill_counters as backfill

    backfill(conn)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001-meta",
        """
        -- Small facts about the database as a whole. Keys in use:
        --   index_version: the rules hash the chunks were built with (set by the indexer).
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0002-sources",
        """
        -- One row per indexed document. `raw` is what the chunks are derived from, so a rules
        -- change re-chunks from here and nothing derived is ever the only copy.
        --   label          the name a person or agent gave it (a path, URL, command, session id)
        --   kind           retention policy: durable | ephemeral (TTL, not searched by default)
        --                  | session (TTL)
        --   content_hash   SHA-256 hex of the redacted content; same label+kind+hash = touch only
        --   content_type   markdown | json | plaintext | ... as detected or requested
        --   raw            the redacted content, zstd-compressed
        --   raw_size       its uncompressed size in bytes (size caps, dbsize, retention)
        --   index_version  rules hash the chunks were built with; NULL = not chunked yet,
        --                  differing from meta.index_version = stale, re-chunk from raw
        --   created_at, indexed_at, accessed_at, expires_at: Unix seconds (expires_at NULL = never)
        --   access_count   search hits served from it, for retention scores
        -- UNIQUE (label, kind), not UNIQUE (label): the kind sets a source's lifetime, so an
        -- ephemeral copy must never replace (and later expire) a durable source of the same name.
        CREATE TABLE sources (
            id            INTEGER PRIMARY KEY,
            label         TEXT    NOT NULL CHECK (length(label) > 0),
            kind          TEXT    NOT NULL CHECK (kind IN ('durable', 'ephemeral', 'session')),
            content_hash  TEXT    NOT NULL,
            content_type  TEXT    NOT NULL,
            raw           BLOB    NOT NULL,
            raw_size      INTEGER NOT NULL CHECK (raw_size >= 0),
            index_version TEXT,
            created_at    INTEGER NOT NULL DEFAULT (unixepoch()),
            indexed_at    INTEGER,
            accessed_at   INTEGER,
            access_count  INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
            expires_at    INTEGER,
            UNIQUE (label, kind)
        );
        CREATE INDEX sources_by_hash ON sources (content_hash);
        CREATE INDEX sources_by_index_version ON sources (index_version);
        CREATE INDEX sources_by_expiry ON sources (expires_at) WHERE expires_at IS NOT NULL;
        """,
    ),
    Migration(
        "0003-chunks",
        """
        -- Searchable pieces of sources, twice: word-level (porter stemming) and substring-level
        -- (trigram), with the same rowid for the same chunk (see chunk_rowid).
        --   title     heading path, JSON key path, or similar context for the chunk
        --   content   the chunk text (redacted)
        --   source_id sources.id (UNINDEXED: stored, not searched)
        --   ordinal   0-based position of the chunk within its source (UNINDEXED)
        CREATE VIRTUAL TABLE chunks USING fts5 (
            title, content, source_id UNINDEXED, ordinal UNINDEXED,
            tokenize = 'porter unicode61'
        );
        CREATE VIRTUAL TABLE chunks_trigram USING fts5 (
            title, content, source_id UNINDEXED, ordinal UNINDEXED,
            tokenize = 'trigram'
        );
        -- FTS tables cannot hold foreign keys; deleting a source drops its chunks by rowid range.
        CREATE TRIGGER sources_delete_chunks AFTER DELETE ON sources BEGIN
            DELETE FROM chunks
             WHERE rowid BETWEEN old.id << 20 AND (old.id << 20) + 1048575;
            DELETE FROM chunks_trigram
             WHERE rowid BETWEEN old.id << 20 AND (old.id << 20) + 1048575;
        END;
        """,
    ),
    Migration(
        "0004-vocabulary",
        """
        -- Surface forms of indexed words and how often they occur, for fuzzy query correction.
        -- The length index lets a corrector fetch only terms within its edit-distance band.
        CREATE TABLE vocabulary (
            term      TEXT    PRIMARY KEY,
            frequency INTEGER NOT NULL DEFAULT 0 CHECK (frequency >= 0)
        ) WITHOUT ROWID;
        CREATE INDEX vocabulary_by_length ON vocabulary (length(term));
        """,
    ),
    Migration(
        "0005-vocabulary-word-parts",
        """
        -- The vocabulary now holds the words unicode61 sees (`max_chunk_bytes` counts as `max`,
        -- `chunk`, `bytes`), so a typo in one part of an identifier finds its correction. The
        -- old rows go; `recount_vocabulary` counts every stored chunk again.
        DELETE FROM vocabulary;
        """,
        then=recount_vocabulary,
    ),
    Migration(
        "0006-sources-by-kind",
        """
        -- Every ranked list asks whether any source lies outside the kinds searched, and a
        -- short result counts the sources left out: one seek per kind instead of a pass over
        -- every source (1 ms a statement at 5,000 sources).
        CREATE INDEX sources_by_kind ON sources (kind);
        """,
    ),
    Migration(
        "0007-kind-counters",
        """
        -- Statistics kept as the store changes (capy.store.counters), so a stats report reads
        -- a few rows: per kind, its sources, their raw size and their chunks. Triggers keep
        -- them in the writer's transaction; a source's chunk count sits on its row, because
        -- FTS5 tables take no triggers.
        --   chunk_count  chunks this source has in each FTS table
        --   salience     the content part of its retention score; NULL = not computed yet
        ALTER TABLE sources ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sources ADD COLUMN salience REAL;
        CREATE TABLE kind_counters (
            kind      TEXT    PRIMARY KEY,
            sources   INTEGER NOT NULL DEFAULT 0,
            raw_bytes INTEGER NOT NULL DEFAULT 0,
            chunks    INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE TRIGGER sources_count_insert AFTER INSERT ON sources BEGIN
            INSERT INTO kind_counters (kind, sources, raw_bytes, chunks)
            VALUES (new.kind, 1, new.raw_size, new.chunk_count)
            ON CONFLICT (kind) DO UPDATE SET sources = sources + 1,
                raw_bytes = raw_bytes + excluded.raw_bytes, chunks = chunks + excluded.chunks;
        END;
        CREATE TRIGGER sources_count_delete AFTER DELETE ON sources BEGIN
            UPDATE kind_counters SET sources = sources - 1, raw_bytes = raw_bytes - old.raw_size,
                chunks = chunks - old.chunk_count
             WHERE kind = old.kind;
        END;
        CREATE TRIGGER sources_count_update AFTER UPDATE OF kind, raw_size, chunk_count
        ON sources BEGIN
            UPDATE kind_counters SET sources = sources - 1, raw_bytes = raw_bytes - old.raw_size,
                chunks = chunks - old.chunk_count
             WHERE kind = old.kind;
            INSERT INTO kind_counters (kind, sources, raw_bytes, chunks)
            VALUES (new.kind, 1, new.raw_size, new.chunk_count)
            ON CONFLICT (kind) DO UPDATE SET sources = sources + 1,
                raw_bytes = raw_bytes + excluded.raw_bytes, chunks = chunks + excluded.chunks;
        END;
        -- New content, new salience: computed again on the next report.
        CREATE TRIGGER sources_salience_stale AFTER UPDATE OF raw ON sources BEGIN
            UPDATE sources SET salience = NULL WHERE id = new.id;
        END;
        -- What the tiers are scored from, and which saliences are missing, so a report never
        -- reads the raw content's pages (columns added here sit after `raw` in each row).
        CREATE INDEX sources_by_retention ON sources
            (kind, created_at, indexed_at, accessed_at, access_count, salience);
        CREATE INDEX sources_without_salience ON sources (id) WHERE salience IS NULL;
        """,
        then=backfill_counters,
    ),
    Migration(
        "0008-chunk-vectors",
        """
        -- Vectors of chunks (the optional semantic layer, capy.semantic.knowledge), float16
        -- little-endian blobs, encrypted with the rest of the file; a chunk longer than the
        -- model's input has one per piece (`part`, from 0).
        --   model   the vector version that made it (model name, file hash, how chunks are cut
        --           into pieces): another version's rows are stale and are replaced in the
        --           background
        -- `source_vectors` records which sources are embedded, with which model and from which
        -- chunking: a source without a row for the current model is the backlog. New content
        -- or new chunks delete the row (and the vectors) in the writer's own transaction, so
        -- the backlog is written with its cause.
        --   vector_generation (meta): bumped on every change, so a process that keeps the
        --   vectors in memory knows when to read them again.
        CREATE TABLE chunk_vectors (
            chunk_id  INTEGER NOT NULL,
            part      INTEGER NOT NULL,
            source_id INTEGER NOT NULL,
            model     TEXT    NOT NULL,
            vector    BLOB    NOT NULL,
            PRIMARY KEY (chunk_id, part)
        ) WITHOUT ROWID;
        CREATE INDEX chunk_vectors_by_source ON chunk_vectors (source_id);
        CREATE TABLE source_vectors (
            source_id     INTEGER PRIMARY KEY,
            model         TEXT    NOT NULL,
            index_version TEXT    NOT NULL,
            chunks        INTEGER NOT NULL,
            embedded_at   INTEGER NOT NULL DEFAULT (unixepoch())
        );
        INSERT OR IGNORE INTO meta (key, value) VALUES ('vector_generation', '0');
        CREATE TRIGGER sources_delete_vectors AFTER DELETE ON sources
        WHEN EXISTS (SELECT 1 FROM source_vectors WHERE source_id = old.id) BEGIN
            DELETE FROM chunk_vectors WHERE source_id = old.id;
            DELETE FROM source_vectors WHERE source_id = old.id;
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        CREATE TRIGGER sources_vectors_stale AFTER UPDATE OF raw, index_version ON sources
        WHEN EXISTS (SELECT 1 FROM source_vectors WHERE source_id = new.id) BEGIN
            DELETE FROM chunk_vectors WHERE source_id = new.id;
            DELETE FROM source_vectors WHERE source_id = new.id;
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        """,
    ),
    Migration(
        "0009-contentless-trigram",
        """
        -- The trigram table keeps only its index: every chunk's title and content are stored
        -- once, in `chunks` (same rowid), instead of a second copy the trigram list never
        -- needed (it ranks rowids; the text it shows is read from `chunks`). Measured on 2-6 MB
        -- of real text: the copy cost 6-18% of the trigram table's insert CPU, and a store of
        -- 6.1 MB of it shrinks from 58.8 to 51.0 MB. Search results are the same.
        -- `contentless_delete` keeps deletes by rowid range working as before, so the trigger
        -- of 0003 (which names the table, not its columns) serves the new table unchanged. The
        -- index is built again from `chunks`, so it holds exactly what the indexer writes.
        DROP TABLE chunks_trigram;
        CREATE VIRTUAL TABLE chunks_trigram USING fts5 (
            title, content,
            content = '', contentless_delete = 1,
            tokenize = 'trigram'
        );
        INSERT INTO chunks_trigram (rowid, title, content) SELECT rowid, title, content FROM chunks;
        """,
    ),
    Migration(
        "0010-vocabulary-without-length-index",
        """
        -- Typo correction now reads the whole vocabulary once per process and bands it by
        -- length in memory; nothing asks this index any more, and every indexed word paid for
        -- a second B-tree insert (a third of the vocabulary's write cost on a bulk load).
        DROP INDEX vocabulary_by_length;
        """,
    ),
    Migration(
        "0011-trigram-blocks",
        """
        -- The trigram table takes one row per block of 16 consecutive chunks of a source (their
        -- texts joined by newlines), with the rowid of the block's first chunk, instead of one
        -- row per chunk: FTS5 pays per row and distinct term, and a small chunk holds most of
        -- its trigrams once (capy.store.trigram_blocks: the trigram inserts of 6.1 MB of real
        -- text take 1.5 s of CPU instead of 2.5). A search ranks blocks, then finds the chunks
        -- in each that match. Blocks are aligned runs of chunk rowids inside the source's
        -- range, so the range deletes of 0003 serve them unchanged. The table is built again
        -- from `chunks`, block by block, in this transaction.
        DROP TABLE chunks_trigram;
        CREATE VIRTUAL TABLE chunks_trigram USING fts5 (
            title, content,
            content = '', contentless_delete = 1,
            tokenize = 'trigram'
        );
        """,
        then=rebuild_trigram_blocks,
    ),
)

_BOOKKEEPING = """CREATE TABLE IF NOT EXISTS schema_migrations (
    name       TEXT    PRIMARY KEY,
    applied_at INTEGER NOT NULL DEFAULT (unixepoch())
) WITHOUT ROWID"""


def applied_migrations(conn: sqlcipher3.Connection) -> list[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def migrate(conn: sqlcipher3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every pending migration, each in its own transaction; return the names applied.

    `migrations` defaults to the knowledge base's; another database (the vault) passes its own.
    """
    from capy.store.database import transaction

    done = set(applied_migrations(conn))
    _refuse_newer(conn, done, migrations)
    if all(migration.name in done for migration in migrations):
        return []  # the common case: one cheap read, no write lock taken
    applied = []
    for migration in migrations:
        with transaction(conn):
            conn.execute(_BOOKKEEPING)
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)
            ).fetchone()
            if done:
                continue  # another process applied it while we waited for the lock
            for statement in split_statements(migration.sql):
                conn.execute(statement)
            if migration.then is not None:
                migration.then(conn)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (migration.name,))
        applied.append(migration.name)
    return applied


def _refuse_newer(
    conn: sqlcipher3.Connection, done: set[str], migrations: Sequence[Migration]
) -> None:
    """Refuse a database a newer capy has migrated. Its tables may keep their columns and change
    what a row means (0011 made a trigram row a block of chunks), so an older capy writing to it
    would fail nowhere and leave rows the newer one misreads."""
    unknown = sorted(done - {migration.name for migration in migrations})
    if not unknown:
        return
    from capy.store.errors import NewerSchemaError

    row = conn.execute("PRAGMA database_list").fetchone()
    where = f"the database {row[2]}" if row is not None and row[2] else "this database"
    raise NewerSchemaError(
        f"{where} was changed by a newer capy (schema change {unknown[-1]} is unknown to this "
        "version); upgrade capy to open it, or point capy at another database"
    )


def split_statements(sql: str) -> list[str]:
    """Split a script into statements (trigger bodies hold `;` too), without `executescript`,
    which would commit the transaction the migration runs in."""
    import textwrap  # only when migrating: a store already current never splits a script

    statements, current = [], ""
    # Dedented so that the schema stored in sqlite_master reads as written here.
    for line in textwrap.dedent(sql).splitlines(keepends=True):
        if not current and (not line.strip() or line.strip().startswith("--")):
            continue
        current += line
        if sqlcipher3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements
