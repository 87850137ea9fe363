"""Indexing content into the knowledge base: redact, dedup, chunk, and swap chunks atomically.

The slow work (decoding, redaction, chunking, compression) happens before the write lock is
taken; the writes for one source happen in ONE transaction, so a reader sees the old chunks or
the new ones, never a mix and never none. The source row is looked up again under the lock, so
two processes indexing the same label at once end with one row and one set of chunks.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlcipher3

from capy.rules.views.chunking import ContentType
from capy.rules.views.retention import RetentionPack, SourceKind
from capy.store.chunkstore import (
    PendingChunks,
    add_chunk_count,
    chunk_for_index,
    chunk_terms,
    count_chunks,
    drop_chunks,
    set_index_version,
    write_chunks,
)
from capy.store.codec import compress_text
from capy.store.content import ContentError, PreparedContent, prepare_content
from capy.store.database import transaction
from capy.store.reindexing import (
    AUTO_REINDEX_MAX_SOURCES,
    ensure_fresh,
    reindex_stale,
    stale_count,
)

if TYPE_CHECKING:
    from capy.chunking import Chunk
    from capy.rules import RuleSet
    from capy.store import Store

AUTO_CONTENT_TYPE = "auto"


@dataclass(frozen=True)
class IndexResult:
    source_id: int
    label: str
    kind: str
    content_type: str
    chunk_count: int
    bytes: int  # size of the stored (redacted) content
    status: str  # "indexed" | "unchanged" | "replaced"
    redactions: dict[str, int]  # secret rule id -> count (never the secrets)
    omitted_bytes: int = 0  # bytes the size cap cut out of the redacted content


@dataclass(frozen=True)
class _Existing:
    """The parts of a stored source that decide between touch and rewrite."""

    id: int
    content_hash: str
    content_type: str
    index_version: str | None


def index_content(
    store: Store,
    content: str | bytes,
    *,
    label: str,
    kind: str = "durable",
    content_type: str = AUTO_CONTENT_TYPE,
    rules: RuleSet | None = None,
    defer_trigram: bool = False,
) -> IndexResult:
    """Index `content` under `label`; identical content already stored is only touched.

    `defer_trigram`: leave the source's trigram blocks to a catch-up that runs after the call
    (capy.store.trigram_backlog; only for a process that runs one, the server), unless the
    backlog is full. Raises `ContentError` (a `StoreError`) for a bad label, kind or content
    type, binary or empty content, or content over the size cap when the retention pack says
    to reject it.
    """
    rules = rules or _rules_for(store)
    source = prepare_source(
        store, content, label=label, kind=kind, content_type=content_type, rules=rules
    )
    if not defer_trigram:
        with transaction(store.conn) as conn:
            return write_source(conn, source, rules)
    from capy.store.trigram_backlog import WRITE_TURN, should_defer

    with WRITE_TURN.call(), transaction(store.conn) as conn:
        chunks = len(source.chunks or ())
        return write_source(conn, source, rules, defer_trigram=should_defer(conn, chunks))


@dataclass
class PreparedSource:
    """One source made ready outside the write lock: redacted, typed, and (unless the same
    content is already stored) chunked and compressed."""

    label: str
    kind: str
    content_type: str
    prepared: PreparedContent
    label_redactions: dict[str, int]
    version: str
    now: int
    expires_at: int | None
    chunks: list[Chunk] | None = None  # None: found current when prepared, not chunked
    blob: bytes | None = None
    terms: Counter[str] | None = None  # the chunks' vocabulary counts

    def result(self, source_id: int, chunk_count: int, status: str) -> IndexResult:
        return IndexResult(
            source_id=source_id,
            label=self.label,
            kind=self.kind,
            content_type=self.content_type,
            chunk_count=chunk_count,
            bytes=self.prepared.size,
            status=status,
            redactions=dict(Counter(self.prepared.redactions) + Counter(self.label_redactions)),
            omitted_bytes=self.prepared.omitted_bytes,
        )


def prepare_source(
    store: Store,
    content: str | bytes,
    *,
    label: str,
    kind: str = "durable",
    content_type: str = AUTO_CONTENT_TYPE,
    rules: RuleSet,
    lookup: sqlcipher3.Connection | None = None,
) -> PreparedSource:
    """The slow, lock-free part of indexing: decode, redact, detect, then chunk and compress
    unless the same content is already stored (read without the lock; the write re-checks).
    `lookup`, when given, is the connection that reads the stored row instead of the store's
    own (which a writer thread may be using meanwhile)."""
    from capy.chunking import detect_content_type

    label, kind, content_type = _check_arguments(label, kind, content_type)
    label, label_redactions = stored_label(label, rules)
    retention: RetentionPack = rules.view("retention")
    chunking = rules.view("chunking")
    prepared = prepare_content(
        content, label=label, secrets=rules.view("secrets"), size=retention.size
    )
    if content_type == AUTO_CONTENT_TYPE:
        content_type = str(detect_content_type(prepared.text, chunking, label=label))
    now = int(time.time())
    source = PreparedSource(
        label=label,
        kind=kind,
        content_type=content_type,
        prepared=prepared,
        label_redactions=label_redactions,
        version=rules.index_version,
        now=now,
        expires_at=expiry(retention, kind, now),
    )
    if not _is_current(find_source(lookup or store.conn, label, kind), source):
        _chunk(source, rules)
    return source


def write_source(
    conn: sqlcipher3.Connection,
    source: PreparedSource,
    rules: RuleSet,
    *,
    defer_trigram: bool = False,
) -> IndexResult:
    """The writes for one source; the caller holds the write transaction. The row is looked
    up again under the lock, so two processes indexing one label at once end with one row."""
    result, pending = write_source_row(conn, source, rules)
    if pending is not None:
        write_chunks(conn, [pending], defer_trigram=defer_trigram)
    return result


def write_source_row(
    conn: sqlcipher3.Connection, source: PreparedSource, rules: RuleSet
) -> tuple[IndexResult, PendingChunks | None]:
    """Everything of one source but its FTS rows: the row, its old chunks dropped, its chunk
    count. The caller writes the returned chunks (`write_chunks`) in the same transaction."""
    existing = find_source(conn, source.label, source.kind)
    if _is_current(existing, source):
        _touch(conn, existing.id, source.now, source.expires_at)
        return source.result(existing.id, count_chunks(conn, existing.id), "unchanged"), None
    if source.chunks is None:  # current when prepared, changed since: rare, chunk it now
        _chunk(source, rules)
    source_id = _upsert_source(conn, source)
    removed = drop_chunks(conn, source_id) if existing else Counter()
    add_chunk_count(conn, source_id, len(source.chunks))
    set_index_version(conn, source.version)
    pending = PendingChunks(source_id, source.chunks, source.terms, removed)
    return source.result(source_id, len(source.chunks), "replaced" if existing else "indexed"), (
        pending
    )


def _chunk(source: PreparedSource, rules: RuleSet) -> None:
    chunking = rules.view("chunking")
    text = source.prepared.text
    source.chunks = chunk_for_index(text, source.content_type, source.label, chunking)
    source.terms = chunk_terms(source.chunks)  # here, outside the lock, like the chunking
    source.blob = compress_text(text)


def _rules_for(store: Store) -> RuleSet:
    from capy.rules import load_rules

    return load_rules(store.location.project_root)


def stored_label(label: str, rules: RuleSet) -> tuple[str, dict[str, int]]:
    """A source label as stored and looked up: redacted like the content, since a label is
    often a command line or a URL and may hold a token (`--source` given one, say)."""
    from capy.store.content import redact_text

    return redact_text(label, rules.view("secrets"))


def _check_arguments(label: object, kind: object, content_type: object) -> tuple[str, str, str]:
    if not isinstance(label, str) or not label.strip():
        raise ContentError("a source needs a label: a non-empty name such as a path or a command")
    try:
        kind = SourceKind(kind).value
    except ValueError:
        kinds = ", ".join(item.value for item in SourceKind)
        raise ContentError(f"unknown source kind {kind!r}; use one of {kinds}") from None
    types = [AUTO_CONTENT_TYPE, *(item.value for item in ContentType)]
    if content_type not in types:
        raise ContentError(f"unknown content type {content_type!r}; use one of {', '.join(types)}")
    return label, kind, str(content_type)


def expiry(retention: RetentionPack, kind: str, now: int) -> int | None:
    """Unix time at which a source of `kind` indexed at `now` expires (None: never)."""
    ttl = retention.kinds.of(kind).ttl
    return None if ttl is None else now + int(ttl.total_seconds())


def find_source(conn: sqlcipher3.Connection, label: str, kind: str) -> _Existing | None:
    row = conn.execute(
        "SELECT id, content_hash, content_type, index_version FROM sources "
        "WHERE label = ? AND kind = ?",
        (label, kind),
    ).fetchone()
    return _Existing(*row) if row else None


def _is_current(existing: _Existing | None, source: PreparedSource) -> bool:
    """Same content, asked to be read the same way, chunked by the rules in force."""
    return (
        existing is not None
        and existing.content_hash == source.prepared.content_hash
        and existing.content_type == source.content_type
        and existing.index_version == source.version
    )


def _touch(conn: sqlcipher3.Connection, source_id: int, now: int, expires_at: int | None) -> None:
    # Indexing the same output again means it is current: its time to live starts over.
    conn.execute(
        "UPDATE sources SET accessed_at = ?, expires_at = ? WHERE id = ?",
        (now, expires_at, source_id),
    )


def _upsert_source(conn: sqlcipher3.Connection, source: PreparedSource) -> int:
    """Insert or rewrite the row; a rewrite keeps its id, creation time and access history."""
    row = conn.execute(
        "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size, "
        "index_version, created_at, indexed_at, expires_at) VALUES (:label, :kind, :hash, "
        ":type, :raw, :size, :version, :now, :now, :expires) "
        "ON CONFLICT (label, kind) DO UPDATE SET content_hash = excluded.content_hash, "
        "content_type = excluded.content_type, raw = excluded.raw, raw_size = excluded.raw_size, "
        "index_version = excluded.index_version, indexed_at = excluded.indexed_at, "
        "expires_at = excluded.expires_at RETURNING id",
        {
            "label": source.label,
            "kind": source.kind,
            "hash": source.prepared.content_hash,
            "type": source.content_type,
            "raw": source.blob,
            "size": source.prepared.size,
            "version": source.version,
            "now": source.now,
            "expires": source.expires_at,
        },
    ).fetchone()
    return row[0]


__all__ = [
    "AUTO_REINDEX_MAX_SOURCES",
    "ContentError",
    "IndexResult",
    "PreparedSource",
    "ensure_fresh",
    "index_content",
    "prepare_source",
    "reindex_stale",
    "stale_count",
    "write_source",
    "write_source_row",
]
