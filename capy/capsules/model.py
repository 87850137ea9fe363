"""What a capsule is: its fields, its canonical JSON, and its id (the SHA-256 of that JSON).

A capsule's id covers everything that makes it itself (scope, source, kind, content, metadata,
created_at), so writing the same event twice is one capsule, and any change to a stored capsule
shows as an id that no longer matches its fields (`capy capsules verify`). Content and metadata
are redacted before the id is computed: the stored, hashed form never holds a known secret.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from capy.canonical import canonical_json
from capy.store.errors import StoreError

LOCAL_TENANT = "local"
# The canonical spelling of created_at: UTC, microseconds, a literal Z. Sorting the strings
# sorts the times.
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class CapsuleError(StoreError):
    """A capsule that cannot be written or found as asked; `message` says why and what to do."""


@dataclass(frozen=True, order=True)
class Scope:
    """Who a capsule belongs to: a tenant (the embedded default has one, `local`) and a project
    (the project's root path, or a name an import gives)."""

    project: str
    tenant: str = LOCAL_TENANT

    def as_json(self) -> dict[str, str]:
        return {"tenant": self.tenant, "project": self.project}


@dataclass(frozen=True)
class CapsuleDraft:
    """A capsule as a writer hands it over, before redaction, checks and hashing."""

    kind: str
    content: str
    source: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: str | datetime | None = None  # None: now
    scope: Scope | None = None  # None: the writer's default scope


@dataclass(frozen=True)
class Capsule:
    """A stored capsule. `forgotten` ones keep id, seq and chain hashes; their content and
    metadata were replaced by the tombstone (see `capy capsules forget`)."""

    id: str
    seq: int
    scope: Scope
    source: str
    kind: str
    content: str
    metadata: dict[str, Any]
    created_at: str
    prev_hash: str
    chain_hash: str
    forgotten_reason: str | None = None

    @property
    def forgotten(self) -> bool:
        return self.forgotten_reason is not None

    def body(self) -> dict[str, Any]:
        return capsule_body(
            self.scope, self.source, self.kind, self.content, self.metadata, self.created_at
        )

    def record(self) -> dict[str, Any]:
        """The capsule whole, as JSON for an archive line or a reader: its body, its place in
        the chain and, once erased, why."""
        record = {
            "id": self.id,
            "seq": self.seq,
            **self.body(),
            "prev_hash": self.prev_hash,
            "chain_hash": self.chain_hash,
        }
        if self.forgotten_reason is not None:
            record["forgotten_reason"] = self.forgotten_reason
        return record


def capsule_body(
    scope: Scope, source: str, kind: str, content: str, metadata: Mapping[str, Any], created_at: str
) -> dict[str, Any]:
    return {
        "scope": scope.as_json(),
        "source": source,
        "kind": kind,
        "content": content,
        "metadata": dict(metadata),
        "created_at": created_at,
    }


def capsule_id(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def canonical_time(value: str | datetime | None, *, name: str = "created_at") -> str:
    """`value` in the canonical UTC spelling; None is now. A string is read as ISO 8601 (a
    trailing Z is UTC; a time without a zone is taken as UTC); a bad one is an error that calls
    it `name`, the field or option the person gave it as."""
    if value is None:
        moment = datetime.now(UTC)
    elif isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise CapsuleError(
                f"{name} {value!r} is not an ISO 8601 time: write it as 2026-05-01T12:00:00Z"
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def unix_seconds(created_at: str) -> float:
    # fromisoformat reads the canonical spelling (without its Z) ten times faster than
    # strptime, which a bulk import pays per capsule.
    return datetime.fromisoformat(created_at.removesuffix("Z")).replace(tzinfo=UTC).timestamp()
