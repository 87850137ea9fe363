"""Derivation versions: what a derived row records about how it was made.

A stage's version is a hash of the behaviour of the packs named in its `shaped_by` (the same
canonical fingerprint `index_version` uses, so editing prose changes nothing), the stage's own
name, and the ids of any models involved. A derived row whose version differs from its stage's
current one is stale and is rebuilt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from capy.canonical import canonical_json
from capy.rules.hashing import HASH_LENGTH, pack_fingerprint
from capy.rules.ruleset import RuleSet


def stage_version(rules: RuleSet, stage: str, model_ids: Iterable[str] = ()) -> str:
    view = rules.view("capsules").stage(stage)
    if view is None:
        raise KeyError(f"no active capsules stage named {stage!r}")
    packs = [pack_fingerprint(rules.packs[name]) for name in sorted(view.shaped_by)]
    payload = canonical_json({"stage": stage, "packs": packs, "models": sorted(model_ids)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def current_versions(rules: RuleSet) -> dict[str, str]:
    """Every live stage's version now (stages that need a model add its id when they run)."""
    return {
        stage.name: stage_version(rules, stage.name) for stage in rules.view("capsules").live_stages
    }
