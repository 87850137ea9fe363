"""The vault schema as named migrations (applied by `capy.store.migrations.migrate`), and the
`min_reader_version` marker that keeps an older capy from misreading a newer vault.

A migration's name is never changed or reused once released. A migration that changes the
format in a way older readers would misread also raises `meta.min_reader_version`; this capy
reads vaults whose marker is at most `READER_VERSION`.

Conventions:
- `blobs` hold the verbatim files, keyed by the SHA-256 of their UNcompressed bytes; `encoding`
  names how `data` is stored (the bytes never decide it); `size` is the uncompressed length.
- A message row's rowid is `chunk_rowid(sessions.id, ordinal)` in both FTS tables, so all rows
  of one session are one rowid range (replaced with a range delete) and the lists fuse by rowid.
  `messages_trigram` is an index only (since 0007): a message's text is read from `messages`.
- Session times are the transcript's own ISO-8601 strings; `imported_at` is Unix seconds.
"""

from __future__ import annotations

import sqlcipher3

from capy.store.migrations import Migration, migrate
from capy.vault.errors import NewerVaultError

# The highest format version this capy reads; bumped together with a migration that needs it.
READER_VERSION = 1
MIN_READER_KEY = "min_reader_version"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001-meta",
        """
        -- Small facts about the vault. Keys in use:
        --   min_reader_version: the oldest reader format that can read this file safely.
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO meta (key, value) VALUES ('min_reader_version', '1');
        """,
    ),
    Migration(
        "0002-blobs",
        """
        -- Verbatim files (session JSONL and sidecars), deduplicated by content.
        --   hash      SHA-256 hex of the uncompressed bytes
        --   size      length of the uncompressed bytes
        --   encoding  how `data` is stored: zstd | identity
        CREATE TABLE blobs (
            hash       TEXT    PRIMARY KEY,
            size       INTEGER NOT NULL CHECK (size >= 0),
            encoding   TEXT    NOT NULL CHECK (encoding IN ('zstd', 'identity')),
            data       BLOB    NOT NULL,
            created_at INTEGER NOT NULL DEFAULT (unixepoch())
        );
        """,
    ),
    Migration(
        "0003-sessions",
        """
        -- One row per archived session; (platform, session_id) names it. When the same session
        -- arrives again larger (it went on), its files and message rows are replaced.
        --   project      the session's working directory, as recorded in the transcript
        --   source_path  where its main file was imported from (restore puts it back there)
        --   size         uncompressed bytes of all its files
        --   index_version  rules hash its message rows were built with
        CREATE TABLE sessions (
            id              INTEGER PRIMARY KEY,
            platform        TEXT    NOT NULL,
            session_id      TEXT    NOT NULL CHECK (length(session_id) > 0),
            project         TEXT,
            git_branch      TEXT,
            model           TEXT,
            title           TEXT,
            started_at      TEXT,
            ended_at        TEXT,
            message_count   INTEGER NOT NULL DEFAULT 0,
            tool_call_count INTEGER NOT NULL DEFAULT 0,
            malformed_lines INTEGER NOT NULL DEFAULT 0,
            source_path     TEXT    NOT NULL,
            size            INTEGER NOT NULL CHECK (size >= 0),
            index_version   TEXT,
            imported_at     INTEGER NOT NULL DEFAULT (unixepoch()),
            UNIQUE (platform, session_id)
        );
        CREATE INDEX sessions_by_project ON sessions (project);
        CREATE INDEX sessions_by_start ON sessions (started_at);
        -- The files of a session: its transcript (`relpath` = its file name) and its sidecars
        -- (`<stem>/subagents/agent-*.jsonl`), paths relative to the transcript's folder.
        CREATE TABLE session_files (
            session   INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            relpath   TEXT    NOT NULL,
            blob_hash TEXT    NOT NULL REFERENCES blobs (hash),
            PRIMARY KEY (session, relpath)
        ) WITHOUT ROWID;
        CREATE INDEX session_files_by_blob ON session_files (blob_hash);
        """,
    ),
    Migration(
        "0004-messages",
        """
        -- One searchable row per message, word-level (porter) and substring-level (trigram).
        --   title          the tool call summaries a row answers or makes
        --   body           message text (redacted); excluded-result tools leave it empty
        --   role           user | assistant | tool | system (UNINDEXED: filtered, not searched)
        --   timestamp      the message's own ISO-8601 time (UNINDEXED)
        --   index_version  rules hash the row was built with (UNINDEXED)
        CREATE VIRTUAL TABLE messages USING fts5 (
            title, body, role UNINDEXED, timestamp UNINDEXED, index_version UNINDEXED,
            tokenize = 'porter unicode61'
        );
        CREATE VIRTUAL TABLE messages_trigram USING fts5 (
            title, body, tokenize = 'trigram'
        );
        CREATE TRIGGER sessions_delete_messages AFTER DELETE ON sessions BEGIN
            DELETE FROM messages
             WHERE rowid BETWEEN old.id << 20 AND (old.id << 20) + 1048575;
            DELETE FROM messages_trigram
             WHERE rowid BETWEEN old.id << 20 AND (old.id << 20) + 1048575;
        END;
        -- Indexed word forms and their frequencies, for fuzzy query correction.
        CREATE TABLE vocabulary (
            term      TEXT    PRIMARY KEY,
            frequency INTEGER NOT NULL DEFAULT 0 CHECK (frequency >= 0)
        ) WITHOUT ROWID;
        CREATE INDEX vocabulary_by_length ON vocabulary (length(term));
        """,
    ),
    Migration(
        "0005-message-vectors",
        """
        -- Vectors of messages (the optional semantic layer, capy.semantic.knowledge with its
        -- VAULT layout), float16 blobs encrypted with the rest of the file, shaped as the
        -- knowledge base's chunk_vectors and source_vectors: `chunk_id` is the message rowid,
        -- `source_id` the session, a long message has one row per piece (`part`).
        -- `session_vectors` says which sessions are embedded, by which model: a session without
        -- a row for the current model is the backlog. A session that arrives again (it went
        -- on) or is reindexed loses its row and vectors in the writer's own transaction.
        CREATE TABLE message_vectors (
            chunk_id  INTEGER NOT NULL,
            part      INTEGER NOT NULL,
            source_id INTEGER NOT NULL,
            model     TEXT    NOT NULL,
            vector    BLOB    NOT NULL,
            PRIMARY KEY (chunk_id, part)
        ) WITHOUT ROWID;
        CREATE INDEX message_vectors_by_session ON message_vectors (source_id);
        CREATE TABLE session_vectors (
            source_id     INTEGER PRIMARY KEY,
            model         TEXT    NOT NULL,
            index_version TEXT    NOT NULL,
            chunks        INTEGER NOT NULL,
            embedded_at   INTEGER NOT NULL DEFAULT (unixepoch())
        );
        INSERT OR IGNORE INTO meta (key, value) VALUES ('vector_generation', '0');
        CREATE TRIGGER sessions_delete_vectors AFTER DELETE ON sessions
        WHEN EXISTS (SELECT 1 FROM session_vectors WHERE source_id = old.id) BEGIN
            DELETE FROM message_vectors WHERE source_id = old.id;
            DELETE FROM session_vectors WHERE source_id = old.id;
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        CREATE TRIGGER sessions_vectors_stale
        AFTER UPDATE OF size, message_count, index_version ON sessions
        WHEN EXISTS (SELECT 1 FROM session_vectors WHERE source_id = new.id) BEGIN
            DELETE FROM message_vectors WHERE source_id = new.id;
            DELETE FROM session_vectors WHERE source_id = new.id;
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        """,
    ),
    Migration(
        "0007-contentless-trigram",
        """
        -- The trigram table keeps only its index: a message's title and body are stored once,
        -- in `messages` (same rowid), instead of a second copy the trigram list never read
        -- (it ranks rowids; search reads the text from `messages`), as the knowledge base's
        -- chunks_trigram since its 0009. `contentless_delete` keeps the range deletes of a
        -- replaced session and of the trigger of 0004 (which names the table, not its
        -- columns) working unchanged. The index is built again from `messages`, in this
        -- migration's one transaction: stopped halfway, the vault keeps its old table.
        DROP TABLE messages_trigram;
        CREATE VIRTUAL TABLE messages_trigram USING fts5 (
            title, body,
            content = '', contentless_delete = 1,
            tokenize = 'trigram'
        );
        INSERT INTO messages_trigram (rowid, title, body) SELECT rowid, title, body FROM messages;
        """,
    ),
)


def prepare_vault(conn: sqlcipher3.Connection) -> None:
    """Refuse a vault this capy is too old to read, then apply pending migrations."""
    check_reader_version(conn)
    migrate(conn, MIGRATIONS)


def check_reader_version(conn: sqlcipher3.Connection) -> None:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return  # a new vault
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MIN_READER_KEY,)).fetchone()
    marker = str(row[0]) if row else str(READER_VERSION)
    # An unreadable marker fails closed: guessing could let an old capy rewrite a newer format.
    if not marker.isdigit() or int(marker) > READER_VERSION:
        raise NewerVaultError(
            f"this vault was written by a newer capy (it needs reader version {marker}, this "
            f"capy reads up to {READER_VERSION}); upgrade capy to open it, nothing was changed"
        )
