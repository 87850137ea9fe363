"""Canonical JSON: one spelling of a value, so equal data always hashes equal.

Keys sorted, no whitespace, non-ASCII kept as is. Rule-pack hashes and capsule ids both hash
this form; a light module of its own, so a capsule can be hashed without loading the rules.
"""

from __future__ import annotations

import json
from typing import Any


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
