"""Counters kept by the writes equal a recount, through every write path and the backfill."""

from __future__ import annotations

import time
from collections import Counter

from capy.rules import load_rules
from capy.store import open_store, transaction
from capy.store.counters import counter_mismatches, kind_counts, recount, tier_counts
from capy.store.database import connect
from capy.store.indexing import index_content
from capy.store.migrations import MIGRATIONS, migrate
from capy.store.retention import (
    apply_cleanup,
    plan_cleanup,
    retention_score,
    summarize_sources,
    tier_of,
)

LOG = "\n".join(f"line {n}: step ok" for n in range(400)) + "\nTraceback (most recent call last):\n"
NOTES = "# Notes\n\nWe decided to keep the cache.\n\n## More\n\n" + "words and more words\n" * 300


def _index_some(store, rules) -> None:
    index_content(store, LOG, label="build.log", kind="ephemeral", rules=rules)
    index_content(store, NOTES, label="notes.md", rules=rules)
    index_content(store, NOTES + "\nappended\n", label="notes.md", rules=rules)  # replaced
    index_content(store, NOTES, label="other.md", rules=rules)
    index_content(store, NOTES, label="other.md", rules=rules)  # unchanged: touched only


def test_counters_follow_index_rewrite_and_cleanup(project_dir) -> None:
    rules = load_rules(project_dir)
    with open_store(project_dir) as store:
        _index_some(store, rules)
        assert counter_mismatches(store.conn) == []
        counts = {item.kind: item for item in kind_counts(store.conn)}
        assert counts["durable"].sources == 2 and counts["ephemeral"].sources == 1
        assert counts["durable"].chunks > 0

        plan = plan_cleanup(store, rules=rules, source="notes.md")
        apply_cleanup(store, plan)
        assert counter_mismatches(store.conn) == []
        assert {item.kind: item.sources for item in kind_counts(store.conn)}["durable"] == 1

        # An expiry is a delete of the row: its chunks go by trigger, and the counters too.
        with transaction(store.conn) as conn:
            conn.execute("DELETE FROM sources WHERE kind = 'ephemeral'")
        assert counter_mismatches(store.conn) == []
        assert [item.kind for item in kind_counts(store.conn)] == ["durable"]


def test_migration_backfills_counters_from_existing_rows(project_dir) -> None:
    rules = load_rules(project_dir)
    with open_store(project_dir) as store:
        _index_some(store, rules)
        path, key = store.path, store.key
        expected = recount(store.conn)
    # Undo migration 0007 as an older capy left the file, then let opening migrate it again.
    conn = connect(path, key)
    for name in ("sources_count_insert", "sources_count_delete", "sources_count_update"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TRIGGER sources_salience_stale")
    conn.execute("DROP INDEX sources_by_retention")
    conn.execute("DROP INDEX sources_without_salience")
    conn.execute("DROP TABLE kind_counters")
    conn.execute("ALTER TABLE sources DROP COLUMN salience")
    conn.execute("ALTER TABLE sources DROP COLUMN chunk_count")
    (counters,) = [m.name for m in MIGRATIONS if m.name == "0007-kind-counters"]
    conn.execute("DELETE FROM schema_migrations WHERE name = ?", (counters,))
    assert migrate(conn) == [counters]
    assert kind_counts(conn) == expected and counter_mismatches(conn) == []
    conn.close()


def test_tiers_match_the_score_from_raw_content(project_dir) -> None:
    rules = load_rules(project_dir)
    pack = rules.view("retention")
    with open_store(project_dir) as store:
        _index_some(store, rules)
        later = int(time.time()) + 30 * 86_400  # old enough for tiers to differ by content
        from capy.store.codec import decompress_text
        from capy.store.retention import _all_facts

        expected: dict[str, Counter[str]] = {}
        for facts in _all_facts(store.conn):
            raw = store.conn.execute(
                "SELECT raw FROM sources WHERE id = ?", (facts.id,)
            ).fetchone()[0]
            score = retention_score(facts, decompress_text(raw), pack=pack, now=later)
            expected.setdefault(facts.kind, Counter())[str(tier_of(score, pack))] += 1
        assert tier_counts(store.conn, pack, later) == expected
        stored = store.conn.execute("SELECT count(*) FROM sources WHERE salience IS NULL")
        assert stored.fetchone()[0] == 0
        # A rewrite clears the salience it had; the next report computes it again.
        index_content(store, LOG + "\nmore\n", label="build.log", kind="ephemeral", rules=rules)
        stale = store.conn.execute("SELECT count(*) FROM sources WHERE salience IS NULL")
        assert stale.fetchone()[0] == 1
        summary = summarize_sources(store, rules=rules, now=later)
        assert sum(item.sources for item in summary) == 3


def test_tier_bounds_place_every_score_as_tiers_of_does() -> None:
    tiers = load_rules().view("retention").tiers
    bounds = tiers.bounds()
    for step in range(-10, 111):
        score = step / 100
        assert next(name for name, low in bounds if score >= low) == str(tiers.of(score))
