"""The extract stage: the entities a capsule names and the relations between them, by the
capsules pack's `entities` and `relations` rules (capy.capsules.extraction)."""

from __future__ import annotations

from capy.capsules.extraction import extract
from capy.capsules.model import Capsule
from capy.capsules.sqlite.graph import clear_entities, write_entities
from capy.capsules.stages import StageContext


def run(context: StageContext, n: int, capsule: Capsule) -> int:
    """Replace capsule `n`'s mentions and relations; the number of distinct entities."""
    clear_entities(context.conn, n)
    found = extract(capsule, context.rules.view("capsules"))
    write_entities(context.conn, n, found.mentions, found.relations, context.version)
    return len(found.mentions)
