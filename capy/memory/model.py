"""What memory holds: records (rule, anti_pattern, preference, principle) and the lessons that
make or reinforce them.

A record's id is a hash of its type and its key (an error signature and fix, or the words of a
user's sentence), so replaying the same capsules gives the same ids: `capy memory rebuild` and
feedback capsules that name a record keep working across rebuilds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

RECORD_TYPES = ("rule", "anti_pattern", "preference", "principle")
STATUSES = ("candidate", "established", "deprecated", "superseded")
VERDICTS = ("helpful", "harmful")


def record_id(record_type: str, key: str) -> str:
    return hashlib.sha256(f"{record_type}\n{key}".encode()).hexdigest()[:16]


@dataclass
class Lesson:
    """One thing a session taught, before the gate and the projection: a candidate record."""

    type: str
    text: str
    key: str
    source: str  # error_fix | correction | preference | manual | principle
    session: str
    capsules: list[str]
    at: float
    entities: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)  # command words, for feedback and blocking
    signature: str | None = None
    fix: str | None = None
    block_class: str | None = None
    context: str | None = None  # the command a correction was about
    polarity: str | None = None  # do or avoid, for lessons from the user's words
    task: str | None = None  # what the user asked for in the session
    scores: dict[str, int] = field(default_factory=dict)
    veto: str | None = None  # why no gate may keep it (a fix that only bypassed a check)
    cause: str | None = None  # why it happened, from the LLM's causal analysis
    steps: list[str] = field(default_factory=list)  # what happened between an error and its fix


@dataclass
class Record:
    id: str
    type: str
    text: str
    key: str
    source: str
    project: str
    tenant: str = "local"
    scope: str = "project"
    confidence: float = 0.0
    status: str = "candidate"
    helpful: int = 0
    harmful: int = 0
    failures: int = 0
    sessions: list[str] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    signature: str | None = None
    fix: str | None = None
    context: str | None = None
    polarity: str | None = None
    task: str | None = None
    cause: str | None = None
    block_class: str | None = None
    blocking: bool = True
    supersedes: str | None = None
    superseded_by: str | None = None
    created_ts: float = 0.0
    last_seen_ts: float = 0.0
    feedback: list[str] = field(default_factory=list)  # capsule ids already counted

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        return cls(**{key: value for key, value in data.items() if key in cls.__dataclass_fields__})
