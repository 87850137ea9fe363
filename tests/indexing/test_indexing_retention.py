"""Retention scores, tiers, and cleanup plans and their application, at a fixed `now`."""

from __future__ import annotations

import math

import pytest
from indexing_helpers import expected_vocabulary, source_row, vocabulary

from capy.rules.views.retention import Tier
from capy.store.indexing import index_content
from capy.store.retention import (
    SourceFacts,
    apply_cleanup,
    plan_cleanup,
    retention_score,
    tier_of,
)

DAY = 86_400
NOW = 1_800_000_000
PLAIN = "Meeting notes: the room was booked and lunch arrived on time.\n"
DECISION = "We decided to keep raw content zstd-compressed. Root cause: the WAL was left behind.\n"


def add(store, rules, label, text=PLAIN, kind="durable", *, age_days=0.0, idle_days=None, reads=0):
    """Index a source, then move its clock: created `age_days` ago, last used `idle_days` ago."""
    result = index_content(store, text, label=label, kind=kind, rules=rules)
    created = NOW - int(age_days * DAY)
    used = None if idle_days is None else NOW - int(idle_days * DAY)
    ttl = rules.view("retention").kinds.of(kind).ttl
    store.conn.execute(
        "UPDATE sources SET created_at = ?, indexed_at = ?, accessed_at = ?, access_count = ?, "
        "expires_at = ? WHERE id = ?",
        (
            created,
            created,
            used,
            reads,
            None if ttl is None else created + int(ttl.total_seconds()),
            result.source_id,
        ),
    )
    return result.source_id


def facts(**overrides) -> SourceFacts:
    base = dict(
        id=1, label="x", kind="durable", raw_size=10, stored_bytes=10, created_at=NOW,
        indexed_at=NOW, accessed_at=None, access_count=0, expires_at=None,
    )  # fmt: skip
    return SourceFacts(**{**base, **overrides})


def test_score_follows_the_pack_formula(rules) -> None:
    pack = rules.view("retention")
    fact = facts(indexed_at=NOW - 10 * DAY, access_count=3)
    expected = (
        0.3 * math.exp(-0.045 * 10)
        + 0.5 * pack.salience.of(DECISION)
        + 0.2 * math.log1p(3) / math.log1p(10)
    )
    assert retention_score(fact, DECISION, pack=pack, now=NOW) == pytest.approx(expected)


def test_salient_content_scores_higher(rules) -> None:
    pack = rules.view("retention")
    old = facts(indexed_at=NOW - 60 * DAY)
    plain = retention_score(old, PLAIN, pack=pack, now=NOW)
    salient = retention_score(old, DECISION, pack=pack, now=NOW)
    assert salient > plain
    assert tier_of(plain, pack) is Tier.EVICTABLE
    assert tier_of(salient, pack) in (Tier.WARM, Tier.HOT)


def test_plain_content_just_indexed_is_warm_for_days_not_a_second(rules) -> None:
    pack = rules.view("retention")
    for age in (0, 1, 60, 3 * DAY):
        fresh = facts(indexed_at=NOW - age)
        assert tier_of(retention_score(fresh, PLAIN, pack=pack, now=NOW), pack) is Tier.WARM, age


def test_recent_access_counts_from_the_last_use(rules) -> None:
    pack = rules.view("retention")
    idle = facts(indexed_at=NOW - 90 * DAY)
    read_today = facts(indexed_at=NOW - 90 * DAY, accessed_at=NOW)
    assert retention_score(read_today, PLAIN, pack=pack, now=NOW) > retention_score(
        idle, PLAIN, pack=pack, now=NOW
    )


def test_plan_lists_expired_evictable_and_keeps_the_rest(store, rules) -> None:
    add(store, rules, "old-test-run", kind="ephemeral", age_days=2)  # past its 24 h TTL
    add(store, rules, "fresh-test-run", kind="ephemeral", age_days=0.5)
    add(store, rules, "old-session", kind="session", age_days=61)  # past 60 days
    add(store, rules, "forgotten-notes", age_days=90)  # durable, plain, never read
    add(store, rules, "decision-record", DECISION, age_days=90)  # salient: kept
    add(store, rules, "read-notes", age_days=90, idle_days=80, reads=2)  # read once: kept
    add(store, rules, "young-notes", age_days=10)  # younger than min_age_days
    plan = plan_cleanup(store, rules=rules, now=NOW)
    assert {item.label: item.reason for item in plan.items} == {
        "old-test-run": "expired",
        "old-session": "expired",
        "forgotten-notes": "evicted",
    }
    evicted = next(item for item in plan.items if item.reason == "evicted")
    assert evicted.tier == "evictable" and evicted.score < rules.view("retention").tiers.cold
    assert plan.raw_bytes == sum(item.raw_size for item in plan.items)


def test_grace_spares_sources_used_within_the_hour(store, rules) -> None:
    add(store, rules, "old-test-run", kind="ephemeral", age_days=2, idle_days=0.01)
    assert plan_cleanup(store, rules=rules, now=NOW).items == ()


def test_source_plans_one_label_of_every_kind(store, rules) -> None:
    add(store, rules, "build.log")
    add(store, rules, "build.log", kind="ephemeral")
    add(store, rules, "keep.md")
    plan = plan_cleanup(store, rules=rules, now=NOW, source="build.log")
    assert sorted((item.label, item.kind, item.reason) for item in plan.items) == [
        ("build.log", "durable", "requested"),
        ("build.log", "ephemeral", "requested"),
    ]
    assert plan_cleanup(store, rules=rules, now=NOW, source="missing").items == ()


def test_oversized_sources_are_listed(store, rules, overlay) -> None:
    add(store, rules, "big.log", "line of output\n" * 600, age_days=1)  # within the shipped cap
    smaller = overlay("retention", "size:\n  max_source_bytes: 4096\n")
    plan = plan_cleanup(store, rules=smaller, now=NOW)
    assert [(item.label, item.reason) for item in plan.items] == [("big.log", "oversized")]


def test_plans_change_nothing(store, rules) -> None:
    add(store, rules, "old-test-run", kind="ephemeral", age_days=2)
    plan_cleanup(store, rules=rules, now=NOW)
    assert source_row(store, "old-test-run", "ephemeral") is not None


def test_apply_removes_sources_chunks_and_vocabulary(store, rules) -> None:
    removed_id = add(
        store, rules, "old-test-run", "zyzzyva quokka output\n", "ephemeral", age_days=2
    )
    add(store, rules, "keep.md", DECISION, age_days=1)
    plan = plan_cleanup(store, rules=rules, now=NOW)
    report = apply_cleanup(store, plan)
    assert [item.label for item in report.removed] == ["old-test-run"]
    assert report.skipped == () and report.raw_bytes == len("zyzzyva quokka output\n")
    assert source_row(store, "old-test-run", "ephemeral") is None
    for table in ("chunks", "chunks_trigram"):
        count = store.conn.execute(
            f"SELECT count(*) FROM {table} WHERE rowid >> 20 = ?", (removed_id,)
        ).fetchone()
        assert count == (0,)
    assert "zyzzyva" not in vocabulary(store)
    assert vocabulary(store) == expected_vocabulary(store)


def test_apply_skips_what_changed_since_the_plan(store, rules) -> None:
    add(store, rules, "read-meanwhile", kind="ephemeral", age_days=2)
    add(store, rules, "reindexed-meanwhile", kind="ephemeral", age_days=2)
    plan = plan_cleanup(store, rules=rules, now=NOW)
    store.conn.execute(
        "UPDATE sources SET access_count = access_count + 1 WHERE label = 'read-meanwhile'"
    )
    index_content(store, "new output", label="reindexed-meanwhile", kind="ephemeral", rules=rules)
    report = apply_cleanup(store, plan)
    assert report.removed == ()
    assert sorted(item.label for item in report.skipped) == [
        "read-meanwhile",
        "reindexed-meanwhile",
    ]


def test_optimize_and_vacuum(store, rules) -> None:
    for number in range(30):
        add(store, rules, f"run-{number}", f"output {number} " * 200, "ephemeral", age_days=2)
    plan = plan_cleanup(store, rules=rules, now=NOW)
    report = apply_cleanup(store, plan, optimize=True, vacuum=True)
    assert len(report.removed) == 30
    assert report.optimized and report.vacuumed and report.notes == ()
    assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_a_large_removal_vacuums_by_itself(store, rules) -> None:
    for number in range(10):
        add(store, rules, f"run-{number}", f"output {number} " * 2000, "ephemeral", age_days=2)
    report = apply_cleanup(store, plan_cleanup(store, rules=rules, now=NOW))
    assert report.vacuumed  # everything went: far above vacuum_after_freed_ratio


def test_over_the_soft_cap_the_lowest_scores_go(store, overlay) -> None:
    rules = overlay("retention", "size:\n  store_soft_cap_bytes: 1048576\n  low_water_ratio: 0.5\n")
    for number in range(12):
        text = f"plain output {number} " * 6000 if number < 6 else DECISION * 1500
        add(store, rules, f"s{number}", text, age_days=5, idle_days=1)
    plan = plan_cleanup(store, rules=rules, now=NOW)
    reasons = {item.reason for item in plan.items}
    assert reasons == {"over-cap"}
    scores = [item.score for item in plan.items]
    assert scores == sorted(scores)  # lowest first
