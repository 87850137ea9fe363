"""index_version: a canonical hash of the packs that shape what gets indexed.

Canonical means the parsed data, not the text: key order, comments, quoting and layout do not
count. Fields that document a rule without changing what it does (descriptions, examples, the
version it arrived in) are left out too, so editing prose never marks the index stale. Nor
do the sections a pack's header lists under `answer_time_sections` (dotted paths such as
`log.tally_rules`): they are read only when capy answers, never while it indexes or derives, so
changing them leaves every derived row as it is. The same fingerprint feeds the capsule stages'
versions (capy.capsules.versions).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from capy.canonical import canonical_json
from capy.rules.overlays import HEADER_KEYS, MergedPack

DOCUMENTATION_KEYS = frozenset({"description", "examples", "since"})
HASH_LENGTH = 16
ANSWER_TIME_KEY = "answer_time_sections"


def _behavioural(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _behavioural(value) for key, value in node.items() if key not in DOCUMENTATION_KEYS
        }
    if isinstance(node, list):
        return [_behavioural(item) for item in node]
    return node


def _without(node: Any, path: list[str]) -> Any:
    """`node` less the section at `path` (copied along the path only; absent: unchanged)."""
    if not isinstance(node, dict) or path[0] not in node:
        return node
    if len(path) == 1:
        return {key: value for key, value in node.items() if key != path[0]}
    return {**node, path[0]: _without(node[path[0]], path[1:])}


def pack_fingerprint(pack: MergedPack) -> dict[str, Any]:
    body: Any = {key: value for key, value in pack.data.items() if key not in HEADER_KEYS}
    for dotted in pack.data.get(ANSWER_TIME_KEY) or ():
        body = _without(body, str(dotted).split("."))
    return {"pack": pack.name, "schema": pack.data.get("schema"), "body": _behavioural(body)}


def index_version(packs: Iterable[MergedPack]) -> str:
    shaping = sorted(
        (pack for pack in packs if pack.data.get("shapes_index") is True),
        key=lambda pack: pack.name,
    )
    payload = canonical_json([pack_fingerprint(pack) for pack in shaping])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:HASH_LENGTH]
