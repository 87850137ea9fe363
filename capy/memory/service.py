"""Learning, reading and writing memory records on an open capsule store (what `capy.memory`
exposes; kept apart so a hook importing the package loads none of it)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore
    from capy.capsules.model import Scope


@dataclass
class LearnReport:
    scopes: int = 0
    capsules: int = 0
    records: int = 0
    rejected: int = 0
    digests: list[str] = field(default_factory=list)


def memory_version(store: CapsuleStore) -> str:
    from capy.canonical import canonical_json
    from capy.rules.hashing import pack_fingerprint

    fingerprint = pack_fingerprint(store.rules.packs["memory"])
    return hashlib.sha256(canonical_json(fingerprint).encode()).hexdigest()[:16]


def learn(store: CapsuleStore, *, rebuild: bool = False, now: float | None = None) -> LearnReport:
    """Project every scope with capsules the projection has not read (all of them with
    `rebuild`) and write each project's digest for its hooks."""
    from capy.capsules.sqlite import memory as tables
    from capy.memory.projection import project

    version = memory_version(store)
    if rebuild:
        tables.clear(store.conn)
    from capy.memory.llm import memory_chat
    from capy.memory.vectors import text_similarity

    pack = store.rules.view("memory")
    chat = memory_chat(store, pack)
    report = LearnReport()
    news = tables.scopes_with_news(store.conn, version)
    similar = text_similarity() if news else None
    for scope, last_n in news:
        capsules = [capsule for _, capsule in store.backend.scan(scope)]
        projection = project(capsules, scope, pack, chat, similar)
        records = [record.as_json() for record in projection.records.values()]
        tables.replace_scope(
            store.conn, scope, records, projection.log, last_n=last_n, version=version
        )
        report.scopes += 1
        report.capsules += len(capsules)
        report.records += len(records)
        report.rejected += sum(1 for entry in projection.log if entry[2] == "rejected")
        report.digests.append(refresh_digest(store, scope, now=now))
    return report


def records_of(
    store: CapsuleStore, scope: Scope | None = None, *, now: float | None = None
) -> list[dict[str, Any]]:
    """The scope's records (every scope's when None), with confidence decayed to `now`."""
    from capy.capsules.sqlite import memory as tables
    from capy.memory.model import Record
    from capy.memory.projection import settle

    pack = store.rules.view("memory")
    moment = time.time() if now is None else now
    found = []
    for data in tables.records(store.conn, scope):
        record = Record.from_json(data)
        settle(record, pack, now=moment)
        found.append(record.as_json())
    found.sort(key=lambda item: (-item["confidence"], item["id"]))
    return found


def refresh_digest(store: CapsuleStore, scope: Scope, *, now: float | None = None) -> str:
    from capy.config import load_settings
    from capy.memory.digest import build_digest, write_digest

    settings = load_settings(store.location.project_root).settings
    digest = build_digest(scope.project, records_of(store, scope, now=now), store.rules)
    return write_digest(str(settings.data_dir), scope.project, digest)


def write_operation(
    store: CapsuleStore, operation: dict[str, Any], *, source: str, session_id: str | None = None
) -> str:
    """Keep a memory operation (add, edit, forget, feedback, injected) as a note capsule, then
    project it: the capsule is what a rebuild replays. Returns the capsule's id."""
    from capy.capsules.model import CapsuleDraft

    summary = f"memory {operation['op']}: " + str(
        operation.get("text") or operation.get("record") or ""
    )
    metadata: dict[str, Any] = {"memory": operation, "tags": ["memory"]}
    if session_id:
        metadata["session_id"] = session_id
    appended = store.write(
        [CapsuleDraft(kind="note", content=summary, source=source, metadata=metadata)]
    )
    learn(store)
    return appended[0].id
