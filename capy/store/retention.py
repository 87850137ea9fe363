"""Retention: scoring sources, and planning and applying a cleanup of the knowledge base.

A plan is computed first and shown (dry run is the default); applying it removes only what the
plan listed, and skips a source that changed since (re-indexed or read), so a plan shown to a
person never removes something they did not see. Removal goes in batches of the pack's
`cleanup.batch_size`, each its own transaction, with vocabulary counts kept in step.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlcipher3

from capy.rules.views.retention import RetentionPack, SourceKind, Tier
from capy.store.access_log import fold_access
from capy.store.chunkstore import drop_chunks
from capy.store.database import transaction
from capy.store.vocabulary import apply_term_delta

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store

DAY_S = 86_400
HOUR_S = 3_600
# Tiers from best to worst, to compare "below cold" without relying on enum order.
_TIER_RANK = {Tier.HOT: 3, Tier.WARM: 2, Tier.COLD: 1, Tier.EVICTABLE: 0}
# Reasons a plan gives for removing a source, in the order they are checked.
EXPIRED, REQUESTED, OVERSIZED, EVICTED, OVER_CAP = (
    "expired", "requested", "oversized", "evicted", "over-cap",
)  # fmt: skip
# The indexes over a source cost about as much again as its text in each FTS table; a rough
# figure is enough to decide how many sources bring the store back under its soft cap.
_INDEX_OVERHEAD_FACTOR = 2


@dataclass(frozen=True)
class SourceFacts:
    """What the retention score needs to know about a source."""

    id: int
    label: str
    kind: str
    raw_size: int
    stored_bytes: int  # compressed raw
    created_at: int
    indexed_at: int | None
    accessed_at: int | None
    access_count: int
    expires_at: int | None

    @property
    def last_used(self) -> int:
        return self.accessed_at or self.indexed_at or self.created_at

    @property
    def never_accessed(self) -> bool:
        return self.access_count == 0 and self.accessed_at is None


@dataclass(frozen=True)
class CleanupItem:
    """A source a cleanup removes, and why."""

    source_id: int
    label: str
    kind: str
    reason: str
    raw_size: int
    score: float | None = None  # set when the score decided
    tier: str | None = None
    # What the source looked like when planned; apply skips it if any of these changed.
    indexed_at: int | None = None
    accessed_at: int | None = None
    access_count: int = 0


@dataclass(frozen=True)
class CleanupPlan:
    """What a cleanup will remove, decided before it runs."""

    now: int
    items: tuple[CleanupItem, ...]
    batch_size: int
    store_bytes: int
    vacuum_after_freed_ratio: float

    @property
    def raw_bytes(self) -> int:
        return sum(item.raw_size for item in self.items)


@dataclass(frozen=True)
class CleanupReport:
    """What a cleanup removed, skipped and compacted."""

    removed: tuple[CleanupItem, ...] = ()
    skipped: tuple[CleanupItem, ...] = ()  # changed since the plan, left alone
    optimized: bool = False
    vacuumed: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def raw_bytes(self) -> int:
        return sum(item.raw_size for item in self.removed)


def retention_score(
    facts: SourceFacts, text: str, *, pack: RetentionPack, now: int | None = None
) -> float:
    """The pack's score in [0, 1]: recency decay, salience of the content, and access."""
    now = int(time.time()) if now is None else now
    days_idle = (now - facts.last_used) / DAY_S
    return pack.scoring.score(days_idle, pack.salience.of(text), facts.access_count)


def tier_of(score: float, pack: RetentionPack) -> Tier:
    return pack.tiers.of(score)


def plan_cleanup(
    store: Store, *, rules: RuleSet, now: int | None = None, source: str | None = None
) -> CleanupPlan:
    """What a cleanup would remove; nothing is changed. `source` plans removing that label."""
    pack: RetentionPack = rules.view("retention")
    now = int(time.time()) if now is None else now
    fold_access(store.conn, store.path)  # the searches' hits count in the plan
    facts = _all_facts(store.conn)
    if source is not None:
        from capy.store.indexing import stored_label

        label, _ = stored_label(source, rules)  # labels are stored redacted
        items = [_item(f, REQUESTED) for f in facts if f.label == label]
    else:
        items = _automatic_items(store.conn, facts, pack, now)
    return CleanupPlan(
        now=now,
        items=tuple(items),
        batch_size=pack.cleanup.batch_size,
        store_bytes=_store_bytes(store.conn),
        vacuum_after_freed_ratio=pack.cleanup.vacuum_after_freed_ratio,
    )


def _automatic_items(
    conn: sqlcipher3.Connection, facts: list[SourceFacts], pack: RetentionPack, now: int
) -> list[CleanupItem]:
    grace = pack.cleanup.grace_hours * HOUR_S
    items: list[CleanupItem] = []
    scored: list[tuple[float, SourceFacts]] = []
    for fact in facts:
        if now - fact.last_used < grace:
            continue  # an agent may be using it right now
        if pack.cleanup.remove_expired and fact.expires_at is not None and fact.expires_at <= now:
            items.append(_item(fact, EXPIRED))
        elif fact.raw_size > pack.size.max_source_bytes:
            items.append(_item(fact, OVERSIZED))
        else:
            score = retention_score(fact, _sample(conn, fact.id, pack), pack=pack, now=now)
            if _evictable(fact, score, pack, now):
                items.append(_item(fact, EVICTED, score, tier_of(score, pack)))
            else:
                scored.append((score, fact))
    items.extend(_over_cap_items(conn, items, scored, pack))
    return items


def _evictable(fact: SourceFacts, score: float, pack: RetentionPack, now: int) -> bool:
    rule = pack.cleanup.evict_durable
    return (
        fact.kind == SourceKind.DURABLE
        and (fact.never_accessed or not rule.never_accessed_only)
        and now - fact.created_at >= rule.min_age_days * DAY_S
        and _TIER_RANK[tier_of(score, pack)] < _TIER_RANK[rule.below_tier]
    )


def _over_cap_items(
    conn: sqlcipher3.Connection,
    planned: list[CleanupItem],
    scored: list[tuple[float, SourceFacts]],
    pack: RetentionPack,
) -> list[CleanupItem]:
    """Above the soft cap, the lowest scores go until the store is back under the low water."""
    size, store_bytes = pack.size, _store_bytes(conn)
    if store_bytes <= size.store_soft_cap_bytes:
        return []
    excess = store_bytes - int(size.store_soft_cap_bytes * size.low_water_ratio)
    excess -= sum(_footprint_of(conn, item.source_id) for item in planned)
    extra = []
    for score, fact in sorted(scored, key=lambda pair: pair[0]):
        if excess <= 0:
            break
        extra.append(_item(fact, OVER_CAP, score, tier_of(score, pack)))
        excess -= fact.stored_bytes + _INDEX_OVERHEAD_FACTOR * fact.raw_size
    return extra


def _footprint_of(conn: sqlcipher3.Connection, source_id: int) -> int:
    row = conn.execute(
        "SELECT length(raw), raw_size FROM sources WHERE id = ?", (source_id,)
    ).fetchone()
    return 0 if row is None else row[0] + _INDEX_OVERHEAD_FACTOR * row[1]


def _item(
    fact: SourceFacts, reason: str, score: float | None = None, tier: Tier | None = None
) -> CleanupItem:
    return CleanupItem(
        source_id=fact.id,
        label=fact.label,
        kind=fact.kind,
        reason=reason,
        raw_size=fact.raw_size,
        score=None if score is None else round(score, 4),
        tier=None if tier is None else tier.value,
        indexed_at=fact.indexed_at,
        accessed_at=fact.accessed_at,
        access_count=fact.access_count,
    )


def _all_facts(conn: sqlcipher3.Connection) -> list[SourceFacts]:
    rows = conn.execute(
        "SELECT id, label, kind, raw_size, length(raw), created_at, indexed_at, accessed_at, "
        "access_count, expires_at FROM sources ORDER BY id"
    ).fetchall()
    return [SourceFacts(*row) for row in rows]


def _sample(conn: sqlcipher3.Connection, source_id: int, pack: RetentionPack) -> str:
    from capy.store.codec import decompress_text  # zstandard: only for a source to sample

    row = conn.execute("SELECT raw FROM sources WHERE id = ?", (source_id,)).fetchone()
    return "" if row is None else pack.salience.sample(decompress_text(row[0]))


def _store_bytes(conn: sqlcipher3.Connection) -> int:
    def pragma(name: str) -> int:
        # int(): SQLCipher answers some pragmas with text on a keyed connection.
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])

    return (pragma("page_count") - pragma("freelist_count")) * pragma("page_size")


def apply_cleanup(
    store: Store, plan: CleanupPlan, *, optimize: bool = False, vacuum: bool = False
) -> CleanupReport:
    """Remove what `plan` lists (unless changed since), then optionally merge FTS and vacuum.

    VACUUM also runs by itself when the removal freed the pack's `vacuum_after_freed_ratio`.
    """
    removed: list[CleanupItem] = []
    skipped: list[CleanupItem] = []
    fold_access(store.conn, store.path)  # a source searched since the plan is then skipped
    items = list(plan.items)
    for start in range(0, len(items), max(plan.batch_size, 1)):
        batch = items[start : start + max(plan.batch_size, 1)]
        with transaction(store.conn) as conn:
            for item in batch:
                (removed if _remove(conn, item) else skipped).append(item)
    notes = []
    if optimize:
        optimize_fts(store.conn)
    freed = sum(item.raw_size for item in removed) * (1 + _INDEX_OVERHEAD_FACTOR)
    if not vacuum and removed and plan.store_bytes:
        vacuum = freed / plan.store_bytes >= plan.vacuum_after_freed_ratio
    vacuumed = False
    if vacuum:
        vacuumed, note = _vacuum(store.conn)
        notes.extend([note] if note else [])
    return CleanupReport(tuple(removed), tuple(skipped), optimize, vacuumed, tuple(notes))


def _remove(conn: sqlcipher3.Connection, item: CleanupItem) -> bool:
    row = conn.execute(
        "SELECT indexed_at, accessed_at, access_count FROM sources "
        "WHERE id = ? AND label = ? AND kind = ?",
        (item.source_id, item.label, item.kind),
    ).fetchone()
    if row is None or tuple(row) != (item.indexed_at, item.accessed_at, item.access_count):
        return False
    apply_term_delta(conn, added=Counter(), removed=drop_chunks(conn, item.source_id))
    conn.execute("DELETE FROM sources WHERE id = ?", (item.source_id,))
    return True


def optimize_fts(conn: sqlcipher3.Connection) -> None:
    """Merge each FTS index's segments into one: smaller, and faster to query."""
    with transaction(conn):
        for table in ("chunks", "chunks_trigram"):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def _vacuum(conn: sqlcipher3.Connection) -> tuple[bool, str | None]:
    try:
        conn.execute("VACUUM")
    except sqlcipher3.OperationalError as error:
        return False, f"VACUUM did not run ({error}); run `capy cleanup --vacuum` when capy is idle"
    return True, None


@dataclass(frozen=True)
class KindSummary:
    """Sources of one kind: how many, their raw size, and how many fall in each tier."""

    kind: str
    sources: int
    raw_bytes: int
    tiers: dict[str, int]


def summarize_sources(
    store: Store, *, rules: RuleSet, now: int | None = None
) -> tuple[KindSummary, ...]:
    """Per kind, the sources and their tiers by the same score a cleanup would use.

    Counts and sizes come from the counters the writes keep (capy.store.counters); tiers move
    with time, so they are scored per source, from stored saliences.
    """
    from capy.store.access_log import pending_access
    from capy.store.counters import kind_counts, tier_counts

    pack: RetentionPack = rules.view("retention")
    tiers = tier_counts(store.conn, pack, now, pending=pending_access(store.path))
    return tuple(
        KindSummary(
            item.kind, item.sources, item.raw_bytes, dict(sorted(tiers.get(item.kind, {}).items()))
        )
        for item in kind_counts(store.conn)
    )
