"""Resolving recall evidence in the transcripts, and matching it to imported capsules.

A question's evidence names transcript events by the ids Claude Code wrote: a line's `uuid`, or
a tool call's `tool_use_id` (shared by the call and its result). The capsule importer stores the
same ids as capsule metadata (`session_id`, `message_uuid`, `tool_use_id`), so the bench matches
a recalled capsule to evidence by comparing those keys, never by text; `evidence_recall` and
`first_hit_rank` score one question's recalled capsules against its keys.

Two details decide what a key must accept:
- Claude Code writes one line per content block, so one assistant reply can span several lines
  sharing a `message.id`. Whichever line (or that `message.id`) the importer keeps as the
  capsule's `message_uuid`, it is the same reply.
- The session id is the file name, as `capy.sessions.claude` reads it; a sidecar file's lines also
  carry the parent's `sessionId`, and an importer may use either.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capy.bench.recall_questions import REPO_ROOT, Evidence, QuestionSet, QuestionSetError

TESTDATA_DIR = REPO_ROOT.parent / "shared" / "testdata"
# How many unresolved ids an error lists before it says "and N more".
MAX_LISTED = 5


@dataclass(frozen=True)
class CapsuleKey:
    """What a capsule imported from one transcript event carries in its metadata."""

    session_ids: frozenset[str]
    message_uuids: frozenset[str] = frozenset()
    tool_use_id: str | None = None

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        if metadata.get("session_id") not in self.session_ids:
            return False
        if self.tool_use_id is not None:
            return metadata.get("tool_use_id") == self.tool_use_id
        return metadata.get("message_uuid") in self.message_uuids


@dataclass
class TranscriptIndex:
    """The ids one transcript file holds, read once."""

    session_id: str
    line_sessions: dict[str, str] = field(default_factory=dict)  # uuid -> the line's sessionId
    message_groups: dict[str, frozenset[str]] = field(default_factory=dict)  # uuid -> reply ids
    tool_calls: dict[str, str] = field(default_factory=dict)  # tool_use_id -> sessionId
    tool_results: set[str] = field(default_factory=set)  # tool_use_ids that got a result

    @classmethod
    def read(cls, path: Path) -> TranscriptIndex:
        index = cls(session_id=path.stem)
        groups: dict[str, set[str]] = {}
        for record in _records(path):
            uuid = _text(record.get("uuid"))
            session = _text(record.get("sessionId")) or index.session_id
            message = record.get("message") if isinstance(record.get("message"), dict) else {}
            if uuid:
                index.line_sessions[uuid] = session
                group = _text(message.get("id")) or uuid
                groups.setdefault(group, {group}).add(uuid)
            for block in _blocks(message):
                if block.get("type") == "tool_use" and _text(block.get("id")):
                    index.tool_calls[block["id"]] = session
                elif block.get("type") == "tool_result" and _text(block.get("tool_use_id")):
                    index.tool_results.add(block["tool_use_id"])
        for members in groups.values():
            frozen = frozenset(members)
            for uuid in members:
                index.message_groups[uuid] = frozen
        return index

    def key(self, record_id: str) -> CapsuleKey | None:
        """The capsule key for a line uuid or a tool_use_id; None when the file has no such id
        (or a tool call that never got its result, which no capsule would hold)."""
        if record_id in self.tool_results and record_id in self.tool_calls:
            sessions = frozenset({self.session_id, self.tool_calls[record_id]})
            return CapsuleKey(session_ids=sessions, tool_use_id=record_id)
        if record_id in self.line_sessions:
            sessions = frozenset({self.session_id, self.line_sessions[record_id]})
            return CapsuleKey(session_ids=sessions, message_uuids=self.message_groups[record_id])
        return None


def capsule_key(path: Path, record_id: str) -> CapsuleKey:
    """The capsule metadata key for one transcript line uuid or tool_use_id in `path`."""
    key = TranscriptIndex.read(path).key(record_id)
    if key is None:
        raise QuestionSetError(f"{path.name} has no line uuid or answered tool call `{record_id}`")
    return key


def evidence_recall(
    keys: Sequence[CapsuleKey], recalled: Sequence[Mapping[str, Any]], k: int
) -> float:
    """The share of a question's evidence found among the metadata of the first `k` capsules
    recalled (evidence recall at k)."""
    top = recalled[:k]
    found = sum(1 for key in keys if any(key.matches(metadata) for metadata in top))
    return found / len(keys) if keys else 0.0


def first_hit_rank(keys: Sequence[CapsuleKey], recalled: Sequence[Mapping[str, Any]]) -> int | None:
    """The 1-based rank of the first recalled capsule that answers the question (for MRR)."""
    for rank, metadata in enumerate(recalled, 1):
        if any(key.matches(metadata) for key in keys):
            return rank
    return None


def resolve_evidence(
    question_set: QuestionSet, testdata: Path = TESTDATA_DIR
) -> dict[Evidence, CapsuleKey]:
    """Every evidence item's capsule key; a QuestionSetError lists the ids that do not exist."""
    root = testdata / question_set.transcripts
    if not root.is_dir():
        raise QuestionSetError(
            f"no transcripts folder at {root}; the shared test data sits beside the repository"
        )
    indexes: dict[str, TranscriptIndex] = {}
    keys: dict[Evidence, CapsuleKey] = {}
    missing: list[str] = []
    for question in question_set.questions:
        for item in question.evidence:
            index = indexes.get(item.file)
            if index is None:
                index = _index_or_none(root / item.file)
                if index is None:
                    missing.append(f"{question.id}: no transcript file {item.file}")
                    continue
                indexes[item.file] = index
            key = index.key(item.record_id)
            if key is None:
                missing.append(f"{question.id}: {item.file} has no `{item.record_id}`")
            else:
                keys[item] = key
    if missing:
        more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
        listed = "; ".join(missing[:MAX_LISTED])
        raise QuestionSetError(
            f"evidence not found in the transcripts: {listed}{more}; fix the ids in the file"
        )
    return keys


def _index_or_none(path: Path) -> TranscriptIndex | None:
    return TranscriptIndex.read(path) if path.is_file() else None


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """Each JSON-object line; the hand-written fixtures hold lines that are not, skipped here."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def _blocks(message: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            yield block


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
