"""The library calls behind `capy memory ...` and the MCP memory tools: find a record by id
prefix, add, edit, forget and give feedback (each a capsule, then projected), search, stats,
export and import."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from capy.capsules.model import CapsuleError
from capy.memory import learn, records_of, write_operation
from capy.memory.model import RECORD_TYPES, VERDICTS

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore


def project_records(store: CapsuleStore) -> list[dict[str, Any]]:
    """This project's records (and global ones), after learning what the log holds."""
    learn(store)
    return records_of(store, store.default_scope)


def find_record(store: CapsuleStore, prefix: str) -> dict[str, Any]:
    prefix = prefix.strip().lower()
    if len(prefix) < 4:
        raise CapsuleError("give at least 4 characters of the memory record's id")
    found = [record for record in project_records(store) if record["id"].startswith(prefix)]
    if not found:
        raise CapsuleError(
            f"no memory record has an id starting with {prefix!r}: see capy memory list"
        )
    if len(found) > 1:
        raise CapsuleError(f"several memory records start with {prefix!r}: give more of the id")
    return found[0]


def add_record(
    store: CapsuleStore, text: str, record_type: str, *, scope: str = "project", source: str = "cli"
) -> dict[str, Any]:
    if record_type not in RECORD_TYPES:
        raise CapsuleError(
            f"unknown record type {record_type!r}: use one of {', '.join(RECORD_TYPES)}"
        )
    if not text.strip():
        raise CapsuleError("give the record's text")
    write_operation(
        store, {"op": "add", "type": record_type, "text": text, "scope": scope}, source=source
    )
    wanted = " ".join(text.split())
    return next(
        record
        for record in project_records(store)
        if record["text"] == wanted[: len(record["text"])]
    )


def edit_record(
    store: CapsuleStore, prefix: str, *, text: str | None = None, block: bool | None = None
) -> dict[str, Any]:
    record = find_record(store, prefix)
    operation: dict[str, Any] = {"op": "edit", "record": record["id"]}
    if text:
        operation["text"] = text
    if block is not None:
        operation["block"] = block
    if len(operation) == 2:
        raise CapsuleError("say what to change: --text TEXT, --block or --no-block")
    write_operation(store, operation, source="cli")
    newer = [item for item in project_records(store) if item.get("supersedes") == record["id"]]
    return newer[-1] if newer else find_record(store, record["id"])


def forget_record(store: CapsuleStore, prefix: str, why: str = "") -> dict[str, Any]:
    record = find_record(store, prefix)
    write_operation(store, {"op": "forget", "record": record["id"], "why": why}, source="cli")
    return record


def give_feedback(
    store: CapsuleStore,
    prefix: str,
    verdict: str,
    *,
    why: str = "",
    source: str = "cli",
    session_id: str | None = None,
) -> dict[str, Any]:
    if verdict not in VERDICTS:
        raise CapsuleError(f"feedback is {' or '.join(VERDICTS)}, not {verdict!r}")
    record = find_record(store, prefix)
    operation = {"op": "feedback", "record": record["id"], "verdict": verdict, "why": why}
    write_operation(store, operation, source=source, session_id=session_id)
    return find_record(store, record["id"])


def search_records(store: CapsuleStore, query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Records relevant to `query`, ranked as UserPromptSubmit ranks them (words and the entity
    graph), fused by reciprocal rank with the records nearest in meaning when the semantic model
    is on the machine (a search is no hook: it may load the model)."""
    from capy.memory.digest import build_digest
    from capy.memory.inject import relevant
    from capy.memory.prompt_index import prompt_part
    from capy.memory.vectors import text_similarity

    records = project_records(store)
    digest = build_digest(store.default_scope.project, records, store.rules)
    lists = [[item["id"] for item in relevant(prompt_part(digest), query)]]
    similar = text_similarity() if records else None
    if similar is not None:
        floor = store.rules.view("memory").injection.prompt.vector_floor
        near = sorted(
            ((similar(query, item["text"]), item["id"]) for item in records), reverse=True
        )
        lists.append([record_id for score, record_id in near if score >= floor])
    fusion = store.rules.view("search").fusion
    fused: dict[str, float] = {}
    for ranked in lists:
        for rank, record_id in enumerate(ranked, start=1):
            fused[record_id] = fused.get(record_id, 0.0) + fusion.contribution(rank)
    by_id = {record["id"]: record for record in records}
    order = sorted(fused, key=lambda record_id: -fused[record_id])[:limit]
    return [by_id[record_id] for record_id in order]


def stats(store: CapsuleStore) -> dict[str, Any]:
    records = project_records(store)
    return {
        "records": len(records),
        "by_type": dict(Counter(record["type"] for record in records)),
        "by_status": dict(Counter(record["status"] for record in records)),
        "blocking": sum(
            1 for record in records if record.get("block_class") and record.get("blocking", True)
        ),
        "helpful": sum(record["helpful"] for record in records),
        "harmful": sum(record["harmful"] for record in records),
    }


def import_records(store: CapsuleStore, records: list[dict[str, Any]]) -> int:
    """Each exported record becomes an `add` of its text and type (its provenance stays in the
    log it came from)."""
    added = 0
    for record in records:
        if record.get("type") in RECORD_TYPES and str(record.get("text") or "").strip():
            operation = {
                "op": "add",
                "type": record["type"],
                "text": record["text"],
                "scope": record.get("scope", "project"),
            }
            write_operation(store, operation, source="import")
            added += 1
    return added


def provenance_of(store: CapsuleStore, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The capsules a record came from, oldest first: kind, time, session and first lines (as
    the capsule log keeps them, redacted at capture). A forgotten capsule is said to be gone."""
    found = []
    for capsule_id in record.get("provenance", ()):
        try:
            _, capsule = store.find(capsule_id)
        except CapsuleError:
            found.append({"id": capsule_id, "kind": "gone", "at": "", "session": "", "text": ""})
            continue
        found.append(
            {
                "id": capsule.id,
                "kind": capsule.kind,
                "at": str(capsule.created_at),
                "session": str(capsule.metadata.get("session_id") or ""),
                "text": "" if capsule.forgotten else capsule.content[:400],
            }
        )
    return found
