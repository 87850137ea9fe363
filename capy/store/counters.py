"""Statistics kept as the store changes, so a stats report reads a few rows instead of the store.

Per kind, `kind_counters` holds how many sources there are, their raw size and their chunks.
Triggers on `sources` keep it (migration 0007), so every insert, rewrite, delete and expiry
updates it in the writer's own transaction, whichever code path wrote. FTS5 tables take no
triggers, so the chunk count of a source lives on its row (`sources.chunk_count`) and the one
place that writes or drops chunks (`capy.store.chunkstore`) calls `add_chunk_count`.

A source's salience (the content part of its retention score) is computed once from its raw
content and kept on its row; a rewrite of the content clears it (a trigger), and a changed
salience section of the retention pack clears them all. Tiers still move with time, so they are
scored per source, from a covering index rather than from the raw content.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

import sqlcipher3

from capy.digests import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.rules.views.retention import RetentionPack

DAY_S = 86_400
SALIENCE_VERSION_KEY = "salience_version"
# Saliences computed per transaction when many are missing (after the migration, or a change
# of the salience rules), so a writer never waits long on a stats report.
SALIENCE_BATCH = 200


@dataclass(frozen=True)
class KindCount:
    """Sources, raw bytes and chunks of one source kind."""

    kind: str
    sources: int
    raw_bytes: int
    chunks: int


def add_chunk_count(conn: sqlcipher3.Connection, source_id: int, delta: int) -> None:
    """Record `delta` chunks written (or, negative, dropped) for a source, in the caller's
    transaction; the kind's counters follow by trigger."""
    if delta:
        conn.execute(
            "UPDATE sources SET chunk_count = chunk_count + ? WHERE id = ?", (delta, source_id)
        )


def kind_counts(conn: sqlcipher3.Connection) -> tuple[KindCount, ...]:
    rows = conn.execute(
        "SELECT kind, sources, raw_bytes, chunks FROM kind_counters WHERE sources > 0 ORDER BY kind"
    ).fetchall()
    return tuple(KindCount(*row) for row in rows)


def total_chunks(conn: sqlcipher3.Connection) -> int:
    return conn.execute("SELECT coalesce(sum(chunks), 0) FROM kind_counters").fetchone()[0]


def recount(conn: sqlcipher3.Connection) -> tuple[KindCount, ...]:
    """The counters as a full pass over the store finds them (what the counters must equal)."""
    chunks: Counter[str] = Counter()
    kinds = dict(conn.execute("SELECT id, kind FROM sources").fetchall())
    for source_id, count in conn.execute(
        "SELECT rowid >> 20, count(*) FROM chunks GROUP BY rowid >> 20"
    ):
        chunks[kinds.get(source_id, "")] += count
    rows = conn.execute(
        "SELECT kind, count(*), sum(raw_size) FROM sources GROUP BY kind ORDER BY kind"
    ).fetchall()
    return tuple(KindCount(kind, n, size, chunks[kind]) for kind, n, size in rows)


def counter_mismatches(conn: sqlcipher3.Connection) -> list[str]:
    """One line per kind whose counters differ from a recount; empty when they agree."""
    kept = {item.kind: item for item in kind_counts(conn)}
    found = {item.kind: item for item in recount(conn)}
    lines = []
    for kind in sorted(set(kept) | set(found)):
        if kept.get(kind) != found.get(kind):
            lines.append(
                f"{kind}: counters say {kept.get(kind)}, a recount finds {found.get(kind)}"
            )
    return lines


def backfill_counters(conn: sqlcipher3.Connection) -> None:
    """Set every source's chunk count and every kind's counters from the rows (migration 0007)."""
    conn.execute(
        "UPDATE sources SET chunk_count = coalesce((SELECT n FROM (SELECT rowid >> 20 AS id, "
        "count(*) AS n FROM chunks GROUP BY rowid >> 20) AS counted "
        "WHERE counted.id = sources.id), 0)"
    )
    conn.execute("DELETE FROM kind_counters")
    conn.execute(
        "INSERT INTO kind_counters (kind, sources, raw_bytes, chunks) "
        "SELECT kind, count(*), sum(raw_size), sum(chunk_count) FROM sources GROUP BY kind"
    )


def tier_counts(
    conn: sqlcipher3.Connection,
    pack: RetentionPack,
    now: int | None = None,
    *,
    pending: dict[int, tuple[int, int]] | None = None,
) -> dict[str, Counter[str]]:
    """Per kind, how many sources fall in each tier, by the score a cleanup uses; `pending`
    holds the searches' hits not folded into the rows yet (capy.store.access_log)."""
    from capy.store.access_log import with_pending

    now = int(time.time()) if now is None else now
    unsaved = fill_salience(conn, pack)
    rows = conn.execute(
        "SELECT id, kind, coalesce(accessed_at, indexed_at, created_at), access_count, salience "
        "FROM sources INDEXED BY sources_by_retention"
    )
    if pending:
        rows = with_pending(rows, pending)
    # One pass over every source on each report: the tier names and their bounds are looked up
    # once here, not per source (that lookup was half of the pass's CPU).
    bounds = pack.tiers.bounds()
    score, base = pack.scoring.score, pack.salience.base
    counted: Counter[tuple[str, str]] = Counter()
    for source_id, kind, last_used, access_count, salience in rows:
        if salience is None:
            salience = unsaved.get(source_id, base)  # deleted since: any will do
        value = score((now - last_used) / DAY_S, salience, access_count)
        counted[kind, next(name for name, bound in bounds if value >= bound)] += 1
    tiers: dict[str, Counter[str]] = {}
    for (kind, tier), count in counted.items():
        tiers.setdefault(kind, Counter())[tier] = count
    return tiers


def fill_salience(conn: sqlcipher3.Connection, pack: RetentionPack) -> dict[int, float]:
    """Compute and store the saliences missing (new or rewritten sources, or rules changed).

    Best effort: on a store that cannot be written (read-only, locked for long) the missing
    ones are returned, computed in memory from their raw content as before the counters existed.
    """
    from capy.store.database import transaction

    version = salience_version(pack)
    try:
        if _stored_version(conn) != version:
            with transaction(conn):
                conn.execute("UPDATE sources SET salience = NULL WHERE salience IS NOT NULL")
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (SALIENCE_VERSION_KEY, version),
                )
        while scored := _missing_salience(conn, pack, SALIENCE_BATCH):
            with transaction(conn):
                conn.executemany(
                    "UPDATE sources SET salience = ? WHERE id = ?",
                    [(value, source_id) for source_id, value in scored.items()],
                )
    except sqlcipher3.OperationalError:
        return _missing_salience(conn, pack, None)
    return {}


def _missing_salience(
    conn: sqlcipher3.Connection, pack: RetentionPack, limit: int | None
) -> dict[int, float]:
    missing = conn.execute(
        "SELECT id FROM sources INDEXED BY sources_without_salience WHERE salience IS NULL LIMIT ?",
        (-1 if limit is None else limit,),
    ).fetchall()
    if not missing:
        return {}
    from capy.store.codec import decompress_text  # zstandard: only when there is work

    scored = {}
    for (source_id,) in missing:
        row = conn.execute("SELECT raw FROM sources WHERE id = ?", (source_id,)).fetchone()
        if row is not None:
            scored[source_id] = pack.salience.of(decompress_text(row[0]))
    return scored


def salience_version(pack: RetentionPack) -> str:
    """What stored saliences were scored with. Built from the fields that decide a score, not
    from a pydantic dump: a warm CLI process holds plain views (capy.rules.views.plain) and
    must name the same version as the server."""
    salience = pack.salience
    scoring = [
        salience.base,
        salience.sample_bytes,
        [[rule.pattern, rule.weight] for rule in salience.active_rules],
    ]
    return sha256(json.dumps(scoring).encode()).hexdigest()[:16]


def _stored_version(conn: sqlcipher3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (SALIENCE_VERSION_KEY,)).fetchone()
    return row[0] if row else None
