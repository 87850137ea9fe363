"""The user's and the agent's own memory operations, carried by capsules (metadata `memory`) so
a rebuild replays them: add, edit (a new version superseding the old, or the block switch),
forget, and feedback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.memory.model import RECORD_TYPES, VERDICTS, Record, record_id

if TYPE_CHECKING:
    from capy.capsules.model import Scope
    from capy.memory.projection import Projection
    from capy.memory.signals import Operation
    from capy.rules.views.memory import MemoryPack


def apply_operation(
    projection: Projection, event: Operation, scope: Scope, pack: MemoryPack
) -> None:
    op = event.op
    kind = op.get("op")
    target = projection.records.get(str(op.get("record") or ""))
    if kind == "add":
        _add(projection, event, scope, pack)
    elif kind == "forget" and op.get("record"):
        projection.forgotten.add(str(op["record"]))
        projection.records.pop(str(op["record"]), None)
        projection.log.append((event.at, str(op["record"]), "forgotten", str(op.get("why", ""))))
    elif kind == "feedback" and target is not None and op.get("verdict") in VERDICTS:
        from capy.memory.projection import _count

        _count(target, str(op["verdict"]), event.capsule)
        target.last_seen_ts = max(target.last_seen_ts, event.at)
        projection.log.append((event.at, target.id, str(op["verdict"]), str(op.get("why", ""))))
    elif kind == "edit" and target is not None:
        _edit(projection, target, event, pack)


def _add(projection: Projection, event: Operation, scope: Scope, pack: MemoryPack) -> None:
    op = event.op
    record_type = str(op.get("type") or "rule")
    text = " ".join(str(op.get("text") or "").split())[: pack.learning.max_text_chars]
    if record_type not in RECORD_TYPES or not text:
        return
    key = f"manual:{text.lower()}"
    new_id = record_id(record_type, key)
    if new_id in projection.forgotten:
        return
    block = None
    if record_type == "anti_pattern":
        block = next(
            (item.id for item in pack.blocking.live_classes if item.mentions_regex.search(text)),
            None,
        )
    from capy.memory.signals import backticked, command_words

    projection.records[new_id] = Record(
        id=new_id,
        type=record_type,
        text=text,
        key=key,
        source="manual",
        project="" if op.get("scope") == "global" else scope.project,
        tenant=scope.tenant,
        scope="global" if op.get("scope") == "global" else "project",
        sessions=[f"manual:{event.capsule[:12]}"],
        provenance=[event.capsule],
        entities=backticked(text),
        words=sorted(command_words(text, pack.learning.min_word_chars)),
        block_class=block,
        created_ts=event.at,
        last_seen_ts=event.at,
    )
    projection.log.append((event.at, new_id, "added", text[:120]))


def _edit(projection: Projection, target: Record, event: Operation, pack: MemoryPack) -> None:
    op = event.op
    if isinstance(op.get("block"), bool):
        target.blocking = bool(op["block"])
        projection.log.append((event.at, target.id, "edited", f"block={target.blocking}"))
    text = " ".join(str(op.get("text") or "").split())[: pack.learning.max_text_chars]
    if not text or text == target.text:
        return
    # A new version: the old record stays, superseded, and the chain links both ways.
    key = f"{target.key}|v:{text.lower()}"
    new_id = record_id(target.type, key)
    newer = Record.from_json({**target.as_json(), "id": new_id, "key": key, "text": text})
    newer.supersedes, newer.superseded_by = target.id, None
    newer.provenance = [*target.provenance, event.capsule]
    newer.created_ts = newer.last_seen_ts = event.at
    newer.feedback = []
    target.superseded_by = new_id
    projection.records[new_id] = newer
    projection.log.append((event.at, new_id, "edited", f"supersedes {target.id}"))
