"""The capsule log's SQLite schema as named migrations (applied by
`capy.store.migrations.migrate`). A migration's name is never changed or reused once released.

Three parts, each with its own rules:
- The log (`capsules`, `capsule_heads`, `capsule_erasures`): append-only. Triggers refuse
  every UPDATE and DELETE of a capsule except the one erasure allows (content and metadata
  blanked, a reason set, everything else unchanged, once).
- The job queue (`capsule_jobs`): one row per (target, stage, derivation version), so writing a
  job twice is one job; targets are capsule ids, or `scope:<tenant>/<project>` for stages that
  run per scope.
- Derived tables: chunks (FTS5, porter and trigram, rowid `chunk_rowid(capsule rowid,
  ordinal)`; the trigram table is an index only, its text read from `capsule_chunks`),
  entities and their mentions, relations, graph edges, summaries, vectors and the LLM reply
  cache. Every derived row records the derivation version that made it; any of them can be
  dropped and rebuilt from the log alone.
Times are REAL Unix seconds except `created_at`, the capsule's canonical ISO 8601 string.
"""

from __future__ import annotations

import sqlcipher3

from capy.store.migrations import Migration, migrate

IMMUTABLE = "capsules are immutable: to erase one, use capy capsules forget ID --reason"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001-meta",
        """
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0002-capsules",
        f"""
        -- The log. `id` is the SHA-256 of the capsule's canonical JSON (capy.capsules.model);
        -- `seq` numbers a scope's capsules from 1 and `prev_hash`/`chain_hash` chain them
        -- (capy.capsules.chain). `metadata` is canonical JSON. `forgotten_reason` is set only
        -- by erasure, which blanks content and metadata and keeps the rest.
        CREATE TABLE capsules (
            n                INTEGER PRIMARY KEY,
            id               TEXT    NOT NULL UNIQUE CHECK (length(id) = 64),
            tenant           TEXT    NOT NULL,
            project          TEXT    NOT NULL,
            seq              INTEGER NOT NULL CHECK (seq >= 1),
            source           TEXT    NOT NULL,
            kind             TEXT    NOT NULL,
            content          TEXT    NOT NULL,
            metadata         TEXT    NOT NULL,
            created_at       TEXT    NOT NULL,
            created_ts       REAL    NOT NULL,
            prev_hash        TEXT    NOT NULL,
            chain_hash       TEXT    NOT NULL,
            written_at       REAL    NOT NULL,
            forgotten_reason TEXT,
            session_id       TEXT GENERATED ALWAYS AS (json_extract(metadata, '$.session_id'))
                             VIRTUAL,
            UNIQUE (tenant, project, seq)
        );
        CREATE INDEX capsules_by_time ON capsules (tenant, project, created_ts);
        CREATE INDEX capsules_by_session ON capsules (session_id) WHERE session_id IS NOT NULL;
        CREATE INDEX capsules_by_kind ON capsules (kind, created_ts);

        -- Each scope's newest capsule, so dropping the newest capsules shows in verification.
        CREATE TABLE capsule_heads (
            tenant     TEXT    NOT NULL,
            project    TEXT    NOT NULL,
            seq        INTEGER NOT NULL,
            chain_hash TEXT    NOT NULL,
            PRIMARY KEY (tenant, project)
        ) WITHOUT ROWID;

        -- Why each forgotten capsule was erased, and when. Append-only too.
        CREATE TABLE capsule_erasures (
            capsule_id TEXT PRIMARY KEY,
            reason     TEXT NOT NULL CHECK (length(reason) > 0),
            erased_at  REAL NOT NULL
        ) WITHOUT ROWID;

        CREATE TRIGGER capsules_refuse_delete BEFORE DELETE ON capsules BEGIN
            SELECT RAISE(ABORT, '{IMMUTABLE}');
        END;
        CREATE TRIGGER capsules_refuse_update BEFORE UPDATE ON capsules
        WHEN NOT (
            old.forgotten_reason IS NULL AND new.forgotten_reason IS NOT NULL
            AND new.content = '' AND new.metadata = '{{}}'
            AND new.n = old.n AND new.id = old.id AND new.tenant = old.tenant
            AND new.project = old.project AND new.seq = old.seq AND new.source = old.source
            AND new.kind = old.kind AND new.created_at = old.created_at
            AND new.created_ts = old.created_ts AND new.prev_hash = old.prev_hash
            AND new.chain_hash = old.chain_hash AND new.written_at = old.written_at
        ) BEGIN
            SELECT RAISE(ABORT, '{IMMUTABLE}');
        END;
        CREATE TRIGGER capsule_erasures_refuse_change BEFORE UPDATE ON capsule_erasures BEGIN
            SELECT RAISE(ABORT, 'erasure records are immutable');
        END;
        CREATE TRIGGER capsule_erasures_refuse_delete BEFORE DELETE ON capsule_erasures BEGIN
            SELECT RAISE(ABORT, 'erasure records are immutable');
        END;
        """,
    ),
    Migration(
        "0003-jobs",
        """
        -- The durable job queue (capy.capsules.sqlite.queue).
        --   target       a capsule id, or scope:<tenant>/<project> for per-scope stages
        --   version      the stage's derivation version when the job was written
        --   state        ready | running (leased) | done | dead (out of attempts)
        --   not_before   a failed job waits until then (backoff)
        --   lease_until  a running job past its lease may be claimed by another worker
        CREATE TABLE capsule_jobs (
            id          INTEGER PRIMARY KEY,
            target      TEXT    NOT NULL,
            stage       TEXT    NOT NULL,
            version     TEXT    NOT NULL,
            state       TEXT    NOT NULL DEFAULT 'ready'
                        CHECK (state IN ('ready', 'running', 'done', 'dead')),
            attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
            not_before  REAL    NOT NULL DEFAULT 0,
            lease_owner TEXT,
            lease_until REAL,
            last_error  TEXT,
            enqueued_at REAL    NOT NULL,
            finished_at REAL,
            UNIQUE (target, stage, version)
        );
        CREATE INDEX capsule_jobs_claimable ON capsule_jobs (state, stage, not_before);
        """,
    ),
    Migration(
        "0004-derived",
        """
        -- Chunks of capsule content, word-level and substring-level, one rowid for both:
        -- chunk_rowid(capsules.n, ordinal). `capsule_chunk_sets` records, per capsule, the
        -- derivation version its chunks were made with (FTS tables hold no such column well).
        CREATE VIRTUAL TABLE capsule_chunks USING fts5 (
            title, content, capsule_n UNINDEXED, ordinal UNINDEXED,
            tokenize = 'porter unicode61'
        );
        CREATE VIRTUAL TABLE capsule_chunks_trigram USING fts5 (
            title, content, capsule_n UNINDEXED, ordinal UNINDEXED,
            tokenize = 'trigram'
        );
        CREATE TABLE capsule_chunk_sets (
            capsule_n INTEGER PRIMARY KEY,
            version   TEXT    NOT NULL,
            chunks    INTEGER NOT NULL CHECK (chunks >= 0)
        );

        -- Entities by type and normalised name (file, symbol, command, tool, library,
        -- error_type, decision, person, ...), their mentions per capsule, and relations found
        -- in a capsule (subject, relation, object).
        CREATE TABLE entities (
            id   INTEGER PRIMARY KEY,
            type TEXT NOT NULL,
            name TEXT NOT NULL,
            UNIQUE (type, name)
        );
        CREATE TABLE capsule_entities (
            capsule_n INTEGER NOT NULL,
            entity_id INTEGER NOT NULL,
            mentions  INTEGER NOT NULL CHECK (mentions >= 1),
            version   TEXT    NOT NULL,
            PRIMARY KEY (capsule_n, entity_id)
        ) WITHOUT ROWID;
        CREATE INDEX capsule_entities_by_entity ON capsule_entities (entity_id, capsule_n);
        CREATE TABLE capsule_relations (
            capsule_n  INTEGER NOT NULL,
            subject_id INTEGER NOT NULL,
            relation   TEXT    NOT NULL,
            object_id  INTEGER NOT NULL,
            version    TEXT    NOT NULL,
            PRIMARY KEY (capsule_n, subject_id, relation, object_id)
        ) WITHOUT ROWID;

        -- The entity graph: an edge's weight is the number of distinct capsules that support
        -- it, recounted from capsule_entities / capsule_relations, so a rebuild never inflates it.
        CREATE TABLE entity_edges (
            a       INTEGER NOT NULL,
            b       INTEGER NOT NULL,
            kind    TEXT    NOT NULL,
            weight  REAL    NOT NULL CHECK (weight >= 0),
            version TEXT    NOT NULL,
            PRIMARY KEY (a, b, kind)
        ) WITHOUT ROWID;
        CREATE INDEX entity_edges_by_b ON entity_edges (b, a);

        -- Hierarchical summaries: level 1 covers a run of a session's capsules (first..last
        -- seq of its scope), higher levels cover the summaries below them; session_id '' is a
        -- scope-wide summary.
        CREATE TABLE summaries (
            id         INTEGER PRIMARY KEY,
            tenant     TEXT    NOT NULL,
            project    TEXT    NOT NULL,
            session_id TEXT    NOT NULL DEFAULT '',
            level      INTEGER NOT NULL CHECK (level >= 1),
            first_seq  INTEGER NOT NULL,
            last_seq   INTEGER NOT NULL,
            content    TEXT    NOT NULL,
            method     TEXT    NOT NULL,
            version    TEXT    NOT NULL,
            created_ts REAL    NOT NULL,
            UNIQUE (tenant, project, session_id, level, first_seq)
        );

        -- Vectors per chunk and model (filled by the semantic layer when installed).
        CREATE TABLE capsule_vectors (
            capsule_n INTEGER NOT NULL,
            ordinal   INTEGER NOT NULL,
            model     TEXT    NOT NULL,
            dims      INTEGER NOT NULL,
            vector    BLOB    NOT NULL,
            version   TEXT    NOT NULL,
            PRIMARY KEY (capsule_n, ordinal, model)
        ) WITHOUT ROWID;

        -- Replies of a configured chat model, by the hash of the prompt that asked for them.
        CREATE TABLE llm_replies (
            prompt_hash TEXT PRIMARY KEY,
            model       TEXT NOT NULL,
            reply       TEXT NOT NULL,
            created_ts  REAL NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0005-recall",
        """
        -- Recall resolves the words of a query to entities by name, whatever their type or case.
        CREATE INDEX entities_by_name ON entities (name COLLATE NOCASE);
        """,
    ),
    Migration(
        "0006-proxy-messages",
        """
        -- The messages `capy proxy` has recorded, by fingerprint (the hash of a message and
        -- the conversation before it, capy.proxy.messages): clients resend the whole
        -- history every turn, and a message already here is not recorded again. Filled by a
        -- trigger in the capsule's own transaction, so a capsule and its fingerprint land
        -- together (whether written at once or drained from the spool later). Not derived:
        -- erasure keeps the row, so a forgotten message that the client resends stays
        -- forgotten.
        CREATE TABLE proxy_messages (
            fingerprint  TEXT PRIMARY KEY,
            capsule_id   TEXT NOT NULL,
            conversation TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER proxy_messages_remember AFTER INSERT ON capsules
        WHEN new.source = 'proxy' AND json_extract(new.metadata, '$.fingerprint') IS NOT NULL
        BEGIN
            INSERT OR IGNORE INTO proxy_messages (fingerprint, capsule_id, conversation)
            VALUES (
                json_extract(new.metadata, '$.fingerprint'),
                new.id,
                coalesce(json_extract(new.metadata, '$.session_id'), '')
            );
        END;
        """,
    ),
    Migration(
        "0008-memory",
        """
        -- Memory records (capy.memory): a projection of capsules, recomputed per scope from the
        -- log (`capy memory rebuild`). `record` is the whole record as canonical JSON; the
        -- columns beside it are what listings filter and sort on. `version` is the memory
        -- pack's hash when the record was derived.
        CREATE TABLE memory_records (
            id         TEXT PRIMARY KEY,
            tenant     TEXT NOT NULL,
            project    TEXT NOT NULL,
            type       TEXT NOT NULL
                       CHECK (type IN ('rule', 'anti_pattern', 'preference', 'principle')),
            status     TEXT NOT NULL
                       CHECK (status IN ('candidate', 'established', 'deprecated', 'superseded')),
            confidence REAL NOT NULL,
            record     TEXT NOT NULL,
            version    TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX memory_records_by_scope ON memory_records (tenant, project, type);

        -- What learning did and declined to do (gate rejections, LLM fallbacks, feedback), for
        -- `capy memory log`; rebuilt with the records.
        CREATE TABLE memory_log (
            id        INTEGER PRIMARY KEY,
            tenant    TEXT NOT NULL,
            project   TEXT NOT NULL,
            at        REAL NOT NULL,
            record_id TEXT NOT NULL,
            event     TEXT NOT NULL,
            detail    TEXT NOT NULL
        );

        -- How far the projection has read the log, per scope (capsules.n).
        CREATE TABLE memory_progress (
            tenant  TEXT NOT NULL,
            project TEXT NOT NULL,
            last_n  INTEGER NOT NULL,
            version TEXT NOT NULL,
            PRIMARY KEY (tenant, project)
        ) WITHOUT ROWID;
        """,
    ),
    Migration(
        "0009-job-queue-order",
        """
        -- A worker claims a stage's jobs oldest first: walked by (stage, id), a claim reads the
        -- first claimable jobs instead of sorting every ready job of the stage (175 ms a claim
        -- with 100,000 jobs queued, 1.4 ms walked).
        CREATE INDEX capsule_jobs_queue ON capsule_jobs (stage, id);
        """,
    ),
    Migration(
        "0010-pending-jobs",
        """
        -- The jobs a claim may take, oldest first, without the done ones: walked by
        -- (stage, id) alone, a claim read past every done job of its stage first (a drain of
        -- 100,000 capsules read the done part of the queue again on every claim).
        CREATE INDEX capsule_jobs_pending ON capsule_jobs (stage, id)
            WHERE state IN ('ready', 'running');

        -- A count of the writes to capsule_vectors, from a random start (so two logs never
        -- agree by chance): a process that holds the vectors in memory for recall reloads
        -- them only when it moved, instead of reading every vector for every query.
        INSERT OR IGNORE INTO meta (key, value) VALUES ('vectors.changes', abs(random() >> 1));
        CREATE TRIGGER capsule_vectors_inserted AFTER INSERT ON capsule_vectors BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors.changes';
        END;
        CREATE TRIGGER capsule_vectors_deleted AFTER DELETE ON capsule_vectors BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors.changes';
        END;
        """,
    ),
    Migration(
        "0014-contentless-trigram",
        """
        -- The trigram table keeps only its index: a chunk's title and content are stored once,
        -- in `capsule_chunks` (same rowid), instead of a second copy the trigram list never
        -- read (it ranks rowids; recall reads the text from `capsule_chunks`), as the knowledge
        -- base's chunks_trigram since its 0009. Its UNINDEXED columns go too: the rowid holds
        -- the capsule and ordinal. `contentless_delete` keeps the range deletes of erasure and
        -- of a re-chunked capsule, and the full delete of a rebuild, working unchanged. The
        -- index is built again from `capsule_chunks`, in this migration's one transaction:
        -- stopped halfway, the log keeps its old table.
        DROP TABLE capsule_chunks_trigram;
        CREATE VIRTUAL TABLE capsule_chunks_trigram USING fts5 (
            title, content,
            content = '', contentless_delete = 1,
            tokenize = 'trigram'
        );
        INSERT INTO capsule_chunks_trigram (rowid, title, content)
            SELECT rowid, title, content FROM capsule_chunks;
        """,
    ),
)

# Derived tables, in an order that can be emptied safely; `rebuild` empties them.
DERIVED_TABLES = (
    "capsule_chunks",
    "capsule_chunks_trigram",
    "capsule_chunk_sets",
    "capsule_entities",
    "capsule_relations",
    "entity_edges",
    "entities",
    "summaries",
    "capsule_vectors",
    "memory_records",
    "memory_log",
    "memory_progress",
)


def prepare_capsules(conn: sqlcipher3.Connection) -> None:
    migrate(conn, MIGRATIONS)
