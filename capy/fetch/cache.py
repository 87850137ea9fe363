"""The fetch cache: a URL indexed recently enough is answered from the store, not refetched.

A cached entry is the source stored under the URL's label and the requested kind, indexed less
than the URL's TTL ago (retention pack `fetch_cache`). A source under a label the caller chose
only counts when its `URL:` line names this URL, so reusing a label for another page refetches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from capy.fetch.document import records_url
from capy.store.chunkstore import count_chunks
from capy.store.codec import decompress_text

if TYPE_CHECKING:
    from capy.store import Store


@dataclass(frozen=True)
class CachedSource:
    source_id: int
    content_type: str
    text: str
    size: int
    chunk_count: int
    age_seconds: int


def find_cached(
    store: Store,
    *,
    label: str,
    kind: str,
    shown_url: str,
    label_is_url: bool,
    ttl: timedelta,
    now: int,
) -> CachedSource | None:
    row = store.conn.execute(
        "SELECT id, content_type, raw, raw_size, indexed_at FROM sources "
        "WHERE label = ? AND kind = ? AND (expires_at IS NULL OR expires_at > ?)",
        (label, kind, now),
    ).fetchone()
    if row is None or row[4] is None:
        return None
    source_id, content_type, raw, size, indexed_at = row
    age = max(now - indexed_at, 0)
    if age >= ttl.total_seconds():
        return None
    text = decompress_text(raw)
    if not label_is_url and not records_url(text, shown_url):
        return None
    return CachedSource(
        source_id, content_type, text, size, count_chunks(store.conn, source_id), age
    )


def mark_fetched(store: Store, source_id: int, now: int) -> None:
    """Restart the cache clock of a source whose refetched content was unchanged.

    The indexer only touches an unchanged source (`accessed_at`), which search hits move too;
    `indexed_at` is the time its content was last known current, which a refetch just proved.
    """
    from capy.store.database import transaction

    with transaction(store.conn) as conn:
        conn.execute("UPDATE sources SET indexed_at = ? WHERE id = ?", (now, source_id))


def stored_text(store: Store, source_id: int) -> str:
    """The text as stored (redacted, capped): what previews are cut from, so none leaks."""
    row = store.conn.execute("SELECT raw FROM sources WHERE id = ?", (source_id,)).fetchone()
    return decompress_text(row[0]) if row else ""
