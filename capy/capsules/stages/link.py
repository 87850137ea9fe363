"""The link stage: the entity graph around a capsule's entities, recounted from the mention and
relation rows (co-mention edges between entities named in one capsule, relation edges from
the extract stage), so a weight is the number of capsules that support it, however often the
stage runs."""

from __future__ import annotations

from capy.capsules.model import Capsule
from capy.capsules.sqlite.graph import capsule_entity_ids, relation_entity_ids, relink
from capy.capsules.stages import StageContext


def run(context: StageContext, n: int, capsule: Capsule) -> int:
    """Recount the edges touching capsule `n`'s entities; the number of entities touched."""
    touched = set(capsule_entity_ids(context.conn, n)) | set(relation_entity_ids(context.conn, n))
    relink(context.conn, touched, context.version)
    return len(touched)
