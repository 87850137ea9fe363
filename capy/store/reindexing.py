"""Re-chunking sources whose chunks were built by other rules than the ones in force.

`index_version` hashes the packs that shape the index (chunking, secrets, transcripts), so a
stale source may need re-redaction as well as re-chunking: its stored raw text is redacted
again with the current secrets pack before it is chunked, and stored back if that changed it.
Each batch is one transaction; a source re-indexed by someone else meanwhile is left alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.digests import sha256
from capy.store.chunkstore import (
    PendingChunks,
    add_chunk_count,
    chunk_for_index,
    chunk_terms,
    drop_chunks,
    set_index_version,
    write_chunks,
)
from capy.store.database import transaction

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.chunking import Chunk
    from capy.rules import RuleSet
    from capy.store import Store

# The retention pack has no setting for how large a backlog is rebuilt automatically when a
# store is opened, so this is the engine's: 200 typical sources re-chunk in about a second,
# which a person starting a command will not notice; beyond that `capy reindex` shows progress.
AUTO_REINDEX_MAX_SOURCES = 200
# A batch holds the write lock while it writes; these bounds keep that to a fraction of a
# second so hooks and the MCP server are not kept waiting behind a long rebuild.
REINDEX_BATCH_SOURCES = 25
REINDEX_BATCH_BYTES = 4 * 1024 * 1024

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class _Rebuilt:
    """One source re-redacted and re-chunked outside the lock, ready to be written."""

    id: int
    old_hash: str
    old_version: str | None
    text: str
    changed: bool  # redaction changed the stored text
    chunks: list[Chunk]


def stale_count(store: Store, rules: RuleSet) -> int:
    return store.conn.execute(
        "SELECT count(*) FROM sources WHERE index_version IS NOT ?", (rules.index_version,)
    ).fetchone()[0]


def reindex_stale(
    store: Store,
    *,
    rules: RuleSet | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> int:
    """Re-chunk stale sources (every source with `force`) from raw; return how many were."""
    if rules is None:
        from capy.rules import load_rules

        rules = load_rules(store.location.project_root)
    ids = _source_ids(store.conn, rules.index_version, force, limit)
    rebuilt = 0
    for done, batch in _batches(store.conn, ids):
        rebuilt += _rebuild_batch(store.conn, batch, rules)
        if progress is not None:
            progress(done, len(ids))
    if not ids:
        _settle_meta(store.conn, rules.index_version)
    return rebuilt


def ensure_fresh(
    store: Store,
    rules: RuleSet | None = None,
    *,
    max_auto: int = AUTO_REINDEX_MAX_SOURCES,
    notify: Callable[[str], None] | None = None,
) -> int:
    """Re-chunk stale sources when there are at most `max_auto`; return how many were.

    Called right after opening a store. A larger backlog is left for `capy reindex` (search
    still works on the older chunks meanwhile), and `notify` is told so.
    """
    if rules is None:
        from capy.rules import load_rules

        rules = load_rules(store.location.project_root)
    stale = stale_count(store, rules)
    if stale == 0:
        _settle_meta(store.conn, rules.index_version)
        return 0
    if stale > max_auto:
        if notify is not None:
            notify(
                f"{stale} sources were indexed with older rules; run `capy reindex` to rebuild "
                "them (search still uses their older chunks until then)"
            )
        return 0
    return reindex_stale(store, rules=rules)


def _settle_meta(conn: sqlcipher3.Connection, version: str) -> None:
    """Record the current rules hash once nothing is stale (a read first: usually no write)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    if row is None or row[0] != version:
        with transaction(conn):
            set_index_version(conn, version)


def _source_ids(
    conn: sqlcipher3.Connection, version: str, force: bool, limit: int | None
) -> list[int]:
    where = "" if force else "WHERE index_version IS NOT ?"
    params: tuple = () if force else (version,)
    sql = f"SELECT id FROM sources {where} ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        params += (max(limit, 0),)
    return [row[0] for row in conn.execute(sql, params)]


def _batches(conn: sqlcipher3.Connection, ids: Sequence[int]) -> Iterator[tuple[int, list[tuple]]]:
    """Rows to rebuild, in batches bounded by count and raw size; yields (done so far, batch)."""
    batch: list[tuple] = []
    size = 0
    for position, source_id in enumerate(ids, start=1):
        row = conn.execute(
            "SELECT id, label, content_type, content_hash, index_version, raw, raw_size "
            "FROM sources WHERE id = ?",
            (source_id,),
        ).fetchone()
        if row is not None:  # removed since the list was read
            batch.append(row)
            size += row[6]
        full = len(batch) >= REINDEX_BATCH_SOURCES or size >= REINDEX_BATCH_BYTES
        if full or position == len(ids):
            yield position, batch
            batch, size = [], 0


def _rebuild_batch(conn: sqlcipher3.Connection, rows: list[tuple], rules: RuleSet) -> int:
    if not rows:
        return 0
    # Here, not at the top: a store with nothing stale (every warm CLI start) needs neither.
    from capy.store.codec import decompress_text
    from capy.store.content import redact_text

    secrets, chunking = rules.view("secrets"), rules.view("chunking")
    work = []
    for source_id, label, content_type, content_hash, version, raw, _ in rows:
        original = decompress_text(raw)
        text, _counts = redact_text(original, secrets)
        chunks = chunk_for_index(text, content_type, label, chunking)
        work.append(_Rebuilt(source_id, content_hash, version, text, text != original, chunks))
    version, now = rules.index_version, int(time.time())
    with transaction(conn):
        # Every row first, the FTS rows of all after them (see `insert_chunk_rows`).
        pending = [
            _write_row(conn, item, version, now)
            for item in work
            if _still_stale(conn, item, version)
        ]
        set_index_version(conn, version)
        write_chunks(conn, pending)
    return len(pending)


def _still_stale(conn: sqlcipher3.Connection, item: _Rebuilt, version: str) -> bool:
    """False when the source was removed, re-indexed or rebuilt since it was read."""
    row = conn.execute(
        "SELECT content_hash, index_version FROM sources WHERE id = ?", (item.id,)
    ).fetchone()
    return row is not None and row[0] == item.old_hash and row[1] == item.old_version


def _write_row(
    conn: sqlcipher3.Connection, item: _Rebuilt, version: str, now: int
) -> PendingChunks:
    from capy.store.codec import compress_text

    removed = drop_chunks(conn, item.id)
    add_chunk_count(conn, item.id, len(item.chunks))
    if item.changed:
        data = item.text.encode("utf-8")
        conn.execute(
            "UPDATE sources SET raw = ?, raw_size = ?, content_hash = ? WHERE id = ?",
            (compress_text(item.text), len(data), sha256(data).hexdigest(), item.id),
        )
    conn.execute(
        "UPDATE sources SET index_version = ?, indexed_at = ? WHERE id = ?",
        (version, now, item.id),
    )
    return PendingChunks(item.id, item.chunks, chunk_terms(item.chunks), removed)
