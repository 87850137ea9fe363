"""Consolidation without an LLM: a cluster of related records (word overlap at least the pack's
`similarity`, at least `min_cluster` of them) becomes a principle whose text is the cluster's
most central record (the extractive centroid), with every member's provenance. Members stay."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.memory.learning import RULE_TEMPLATE
from capy.memory.model import Record, record_id
from capy.memory.words import stems

if TYPE_CHECKING:
    from capy.memory.projection import Projection
    from capy.rules.views.memory import MemoryPack


def consolidate(projection: Projection, pack: MemoryPack) -> None:
    rules = pack.consolidation
    members = [
        record
        for record in projection.records.values()
        if record.type != "principle" and not record.superseded_by
    ]
    # Only what a learned rule says beyond its template's words ("editing ... and then running
    # it again worked") makes it like another: four unrelated edit-and-retry rules are no cluster.
    template = stems(RULE_TEMPLATE)
    words = {
        record.id: stems(record.text) - (template if record.source == "error_fix" else set())
        for record in members
    }
    placed: set[str] = set()
    made = 0
    for seed in sorted(members, key=lambda record: (record.created_ts, record.id)):
        if seed.id in placed or made >= rules.max_principles:
            continue
        cluster = [
            other
            for other in members
            if other.id not in placed
            and _overlap(words[seed.id], words[other.id]) >= rules.similarity
        ]
        if len(cluster) < rules.min_cluster:
            continue
        placed.update(record.id for record in cluster)
        _principle(projection, cluster, words)
        made += 1


def _overlap(first: set[str], second: set[str]) -> float:
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def _principle(projection: Projection, cluster: list[Record], words: dict[str, set[str]]) -> None:
    centre = max(
        cluster,
        key=lambda record: (
            sum(_overlap(words[record.id], words[other.id]) for other in cluster),
            record.id,
        ),
    )
    key = "principle:" + " ".join(sorted(record.id for record in cluster))
    new_id = record_id("principle", key)
    if new_id in projection.forgotten:
        return
    provenance = [item for record in cluster for item in record.provenance]
    projection.records[new_id] = Record(
        id=new_id,
        type="principle",
        text=centre.text,
        key=key,
        source="principle",
        project=centre.project,
        tenant=centre.tenant,
        sessions=sorted({session for record in cluster for session in record.sessions}),
        provenance=list(dict.fromkeys(provenance)),
        entities=list(dict.fromkeys(item for record in cluster for item in record.entities)),
        words=sorted({word for record in cluster for word in record.words}),
        created_ts=max(record.last_seen_ts for record in cluster),
        last_seen_ts=max(record.last_seen_ts for record in cluster),
    )
    projection.log.append(
        (projection.records[new_id].created_ts, new_id, "consolidated", f"{len(cluster)} records")
    )
