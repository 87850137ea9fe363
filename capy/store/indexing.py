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
    chunk_for_index,
    count_chunks,
    drop_chunks,
    insert_chunks,
    set_index_version,
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
from capy.store.vocabulary import apply_term_delta

if TYPE_CHECKING:
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
) -> IndexResult:
    """Index `content` under `label`; identical content already stored is only touched.

    Raises `ContentError` (a `StoreError`) for a bad label, kind or content type, binary or
    empty content, or content over the size cap when the retention pack says to reject it.
    """
    from capy.chunking import detect_content_type

    rules = rules or _rules_for(store)
    label, kind, content_type = _check_arguments(label, kind, content_type)
    label, label_redactions = stored_label(label, rules)
    retention: RetentionPack = rules.view("retention")
    chunking = rules.view("chunking")
    prepared = prepare_content(
        content, label=label, secrets=rules.view("secrets"), size=retention.size
    )
    if content_type == AUTO_CONTENT_TYPE:
        content_type = str(detect_content_type(prepared.text, chunking, label=label))
    version = rules.index_version
    expires_at = expiry(retention, kind, now := int(time.time()))

    def result(source_id: int, chunk_count: int, status: str) -> IndexResult:
        return IndexResult(
            source_id=source_id,
            label=label,
            kind=kind,
            content_type=content_type,
            chunk_count=chunk_count,
            bytes=prepared.size,
            status=status,
            redactions=dict(Counter(prepared.redactions) + Counter(label_redactions)),
            omitted_bytes=prepared.omitted_bytes,
        )

    existing = find_source(store.conn, label, kind)
    if _is_current(existing, prepared, content_type, version):
        with transaction(store.conn) as conn:
            existing = find_source(conn, label, kind)
            if _is_current(existing, prepared, content_type, version):
                _touch(conn, existing.id, now, expires_at)
                return result(existing.id, count_chunks(conn, existing.id), "unchanged")
    chunks = chunk_for_index(prepared.text, content_type, label, chunking)
    blob = compress_text(prepared.text)
    with transaction(store.conn) as conn:
        existing = find_source(conn, label, kind)
        if _is_current(existing, prepared, content_type, version):
            _touch(conn, existing.id, now, expires_at)  # another process just stored it
            return result(existing.id, count_chunks(conn, existing.id), "unchanged")
        source_id = _upsert_source(
            conn, label, kind, prepared, content_type, blob, version, now, expires_at
        )
        removed = drop_chunks(conn, source_id) if existing else Counter()
        apply_term_delta(conn, insert_chunks(conn, source_id, chunks), removed)
        set_index_version(conn, version)
    return result(source_id, len(chunks), "replaced" if existing else "indexed")


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


def _is_current(
    existing: _Existing | None, prepared: PreparedContent, content_type: str, version: str
) -> bool:
    """Same content, asked to be read the same way, chunked by the rules in force."""
    return (
        existing is not None
        and existing.content_hash == prepared.content_hash
        and existing.content_type == content_type
        and existing.index_version == version
    )


def _touch(conn: sqlcipher3.Connection, source_id: int, now: int, expires_at: int | None) -> None:
    # Indexing the same output again means it is current: its time to live starts over.
    conn.execute(
        "UPDATE sources SET accessed_at = ?, expires_at = ? WHERE id = ?",
        (now, expires_at, source_id),
    )


def _upsert_source(
    conn: sqlcipher3.Connection,
    label: str,
    kind: str,
    prepared: PreparedContent,
    content_type: str,
    blob: bytes,
    version: str,
    now: int,
    expires_at: int | None,
) -> int:
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
            "label": label,
            "kind": kind,
            "hash": prepared.content_hash,
            "type": content_type,
            "raw": blob,
            "size": prepared.size,
            "version": version,
            "now": now,
            "expires": expires_at,
        },
    ).fetchone()
    return row[0]


__all__ = [
    "AUTO_REINDEX_MAX_SOURCES",
    "ContentError",
    "IndexResult",
    "ensure_fresh",
    "index_content",
    "reindex_stale",
    "stale_count",
]
