"""What a person or script sees: the JSON shape of results, snapshotted."""

from __future__ import annotations

import json
from dataclasses import asdict

from capy.store.corpus import search_store

RUNBOOK = [
    (
        "billing > Rollback",
        "To roll back a bad deploy run `kubectl -n billing rollout undo deploy/billing-api` "
        "and watch the error rate for ten minutes.",
    ),
    ("billing > Alerts", "Replication lag alerts fire when lag exceeds 30 seconds."),
    ("billing > Disk", "Detach old invoice_events partitions when the disk is almost full."),
]


def rendered(results) -> str:
    def hit(h):
        fields = asdict(h)
        fields.pop("source_id")
        fields.pop("chunk_id")
        return fields

    payload = [
        {
            "query": r.query,
            "corrected_query": r.corrected_query,
            "note": r.note,
            "hits": [hit(h) for h in r.hits],
        }
        for r in results
    ]
    return json.dumps(payload, indent=2, ensure_ascii=False)


def test_rendered_results(store, put, rules, snapshot):
    put("wiki/runbooks/billing.md", RUNBOOK)
    put("pytest -v", [("FAILED", "rollback test failed")], kind="ephemeral")
    queries = ["how do I roll back a bad deploy", "replcation lag", "kafka", 'NOT "(*']
    assert rendered(search_store(store, queries, rules=rules, limit=2)) == snapshot
