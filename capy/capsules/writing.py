"""Turning drafts into capsules the log will take: checked against the capsules pack,
redacted by the secrets pack, given their canonical time and their id.

Checks refuse rather than repair: an unknown kind or source, a known metadata key of the wrong
type, or content over the pack's limit is a `CapsuleError` saying what to change, and nothing of
the batch is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from capy.capsules.model import (
    CapsuleDraft,
    CapsuleError,
    Scope,
    canonical_json,
    canonical_time,
    capsule_body,
    capsule_id,
)
from capy.capsules.sqlite.log import Prepared

if TYPE_CHECKING:
    from capy.rules.views.capsules import CapsulesPack
    from capy.rules.views.secrets import SecretsPack


def prepare(
    drafts: Sequence[CapsuleDraft],
    *,
    pack: CapsulesPack,
    secrets: SecretsPack,
    default_scope: Scope,
) -> list[Prepared]:
    return [_prepare(draft, pack, secrets, default_scope) for draft in drafts]


def _prepare(
    draft: CapsuleDraft, pack: CapsulesPack, secrets: SecretsPack, default_scope: Scope
) -> Prepared:
    from capy.security.redaction import redact_text, redact_value

    if draft.kind not in pack.kinds:
        raise CapsuleError(
            f"unknown capsule kind {draft.kind!r}: use one of {', '.join(pack.kinds)}"
        )
    if draft.source not in pack.sources:
        raise CapsuleError(
            f"unknown capsule source {draft.source!r}: use one of {', '.join(pack.sources)}"
        )
    metadata = _checked_metadata(draft.metadata, pack)
    content = redact_text(draft.content, secrets=secrets)
    size = len(content.encode("utf-8"))
    if size > pack.limits.max_content_bytes:
        raise CapsuleError(
            f"the capsule's content is {size:,} bytes, over the limit of "
            f"{pack.limits.max_content_bytes:,}: keep the full text in the knowledge base "
            "(capy index) and write a summary that names it"
        )
    metadata = redact_value(metadata, secrets=secrets)
    try:
        metadata_json = canonical_json(metadata)
    except (TypeError, ValueError):
        raise CapsuleError("metadata values must be JSON: text, numbers, lists, objects") from None
    if len(metadata_json.encode("utf-8")) > pack.limits.max_metadata_bytes:
        raise CapsuleError(
            f"the capsule's metadata is over the limit of {pack.limits.max_metadata_bytes:,} "
            "bytes of JSON: keep long values in the content"
        )
    scope = draft.scope or default_scope
    created_at = canonical_time(draft.created_at)
    body = capsule_body(scope, draft.source, draft.kind, content, metadata, created_at)
    return Prepared(
        id=capsule_id(body),
        scope=scope,
        source=draft.source,
        kind=draft.kind,
        content=content,
        metadata_json=metadata_json,
        created_at=created_at,
    )


def _checked_metadata(metadata: Mapping[str, Any], pack: CapsulesPack) -> dict[str, Any]:
    if not isinstance(metadata, Mapping):
        raise CapsuleError("a capsule's metadata must be a JSON object (key: value pairs)")
    checked: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise CapsuleError("metadata keys must be non-empty strings")
        problem = pack.metadata_problem(key, value)
        if problem is not None:
            raise CapsuleError(problem)
        if value is not None:  # an absent value is no value: ids do not depend on it
            checked[key] = list(value) if isinstance(value, tuple) else value
    return checked  # whether the values are JSON shows when they are written as JSON
