"""Entities, their mentions, relations and the entity graph on SQLCipher.

Edge weights are counted again from `capsule_entities` and `capsule_relations` each time a
capsule's entities change (the number of distinct capsules that support the edge), never
incremented, so running a stage twice or rebuilding it leaves the same weights.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sqlcipher3

from capy.capsules.extraction import Entity, Relation

CO_MENTION = "co-mention"


def entity_ids(conn: sqlcipher3.Connection, entities: Iterable[Entity]) -> dict[Entity, int]:
    """Ids of `entities`, creating the ones not seen before."""
    ids: dict[Entity, int] = {}
    for entity in sorted(set(entities)):
        conn.execute(
            "INSERT OR IGNORE INTO entities (type, name) VALUES (?, ?)", (entity.type, entity.name)
        )
        row = conn.execute(
            "SELECT id FROM entities WHERE type = ? AND name = ?", (entity.type, entity.name)
        ).fetchone()
        ids[entity] = int(row[0])
    return ids


def clear_entities(conn: sqlcipher3.Connection, n: int) -> list[int]:
    """Remove capsule `n`'s mentions and relations; the entity ids it had mentioned."""
    had = [
        int(row[0])
        for row in conn.execute("SELECT entity_id FROM capsule_entities WHERE capsule_n = ?", (n,))
    ]
    conn.execute("DELETE FROM capsule_entities WHERE capsule_n = ?", (n,))
    conn.execute("DELETE FROM capsule_relations WHERE capsule_n = ?", (n,))
    return had


def write_entities(
    conn: sqlcipher3.Connection,
    n: int,
    mentions: Mapping[Entity, int],
    relations: Iterable[Relation],
    version: str,
) -> None:
    relations = sorted(relations)
    ids = entity_ids(
        conn, [*mentions, *(r.subject for r in relations), *(r.object for r in relations)]
    )
    conn.executemany(
        "INSERT INTO capsule_entities (capsule_n, entity_id, mentions, version) "
        "VALUES (?, ?, ?, ?)",
        [(n, ids[entity], count, version) for entity, count in sorted(mentions.items())],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO capsule_relations (capsule_n, subject_id, relation, object_id, "
        "version) VALUES (?, ?, ?, ?, ?)",
        [(n, ids[r.subject], r.relation, ids[r.object], version) for r in relations],
    )


def capsule_entity_ids(conn: sqlcipher3.Connection, n: int) -> list[int]:
    rows = conn.execute(
        "SELECT entity_id FROM capsule_entities WHERE capsule_n = ? ORDER BY entity_id", (n,)
    )
    return [int(row[0]) for row in rows]


def relink(conn: sqlcipher3.Connection, entity_ids: Iterable[int], version: str) -> None:
    """Recount every edge touching `entity_ids` from the mention and relation rows."""
    touched = sorted(set(entity_ids))
    for start in range(0, len(touched), 400):
        part = touched[start : start + 400]
        marks = ",".join("?" * len(part))
        conn.execute(f"DELETE FROM entity_edges WHERE a IN ({marks}) OR b IN ({marks})", part * 2)
        # Two indexed halves (the touched entity as the edge's lower end, then its upper
        # end): one WHERE with OR scans every mention for each capsule linked.
        pairs = (
            "SELECT x.entity_id AS a, y.entity_id AS b, x.capsule_n AS n "
            "FROM capsule_entities AS x JOIN capsule_entities AS y "
            "ON y.capsule_n = x.capsule_n AND y.entity_id > x.entity_id "
        )
        conn.execute(
            "INSERT INTO entity_edges (a, b, kind, weight, version) "
            "SELECT a, b, ?, count(DISTINCT n), ? FROM ("
            f"{pairs} WHERE x.entity_id IN ({marks}) UNION "
            f"{pairs} WHERE y.entity_id IN ({marks})) GROUP BY a, b",
            (CO_MENTION, version, *part, *part),
        )
        conn.execute(
            "INSERT INTO entity_edges (a, b, kind, weight, version) "
            "SELECT subject_id, object_id, relation, count(DISTINCT capsule_n), ? "
            f"FROM capsule_relations WHERE subject_id IN ({marks}) OR object_id IN ({marks}) "
            "GROUP BY subject_id, object_id, relation",
            (version, *part, *part),
        )


def forget_capsule_entities(conn: sqlcipher3.Connection, n: int) -> None:
    """Erasure: drop capsule `n`'s mentions and relations and recount the edges they supported,
    keeping each edge's version (the link stage did not change; one capsule's support did)."""
    touched = sorted(set(clear_entities(conn, n)))
    for start in range(0, len(touched), 400):
        part = touched[start : start + 400]
        marks = ",".join("?" * len(part))
        conn.execute(
            "UPDATE entity_edges SET weight = CASE WHEN kind = ? THEN (SELECT count(*) FROM "
            "capsule_entities AS x JOIN capsule_entities AS y ON y.capsule_n = x.capsule_n "
            "WHERE x.entity_id = entity_edges.a AND y.entity_id = entity_edges.b) ELSE (SELECT "
            "count(DISTINCT capsule_n) FROM capsule_relations WHERE subject_id = entity_edges.a "
            "AND object_id = entity_edges.b AND relation = entity_edges.kind) END "
            f"WHERE a IN ({marks}) OR b IN ({marks})",
            (CO_MENTION, *part, *part),
        )
    conn.execute("DELETE FROM entity_edges WHERE weight = 0")


def relation_entity_ids(conn: sqlcipher3.Connection, n: int) -> list[int]:
    rows = conn.execute(
        "SELECT subject_id FROM capsule_relations WHERE capsule_n = ? "
        "UNION SELECT object_id FROM capsule_relations WHERE capsule_n = ?",
        (n, n),
    )
    return [int(row[0]) for row in rows]
