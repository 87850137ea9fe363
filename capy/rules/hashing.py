"""index_version: a canonical hash of the packs that shape what gets indexed.

Canonical means the parsed data, not the text: key order, comments, quoting and layout do not
count. Fields that document a rule without changing what it does (descriptions, examples, the
version it arrived in) are left out too, so editing prose never marks the index stale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from capy.canonical import canonical_json
from capy.rules.overlays import HEADER_KEYS, MergedPack

DOCUMENTATION_KEYS = frozenset({"description", "examples", "since"})
HASH_LENGTH = 16


def _behavioural(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _behavioural(value) for key, value in node.items() if key not in DOCUMENTATION_KEYS
        }
    if isinstance(node, list):
        return [_behavioural(item) for item in node]
    return node


def pack_fingerprint(pack: MergedPack) -> dict[str, Any]:
    body = {key: value for key, value in pack.data.items() if key not in HEADER_KEYS}
    return {"pack": pack.name, "schema": pack.data.get("schema"), "body": _behavioural(body)}


def index_version(packs: Iterable[MergedPack]) -> str:
    shaping = sorted(
        (pack for pack in packs if pack.data.get("shapes_index") is True),
        key=lambda pack: pack.name,
    )
    payload = canonical_json([pack_fingerprint(pack) for pack in shaping])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:HASH_LENGTH]
