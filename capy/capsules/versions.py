"""Derivation versions: what a derived row records about how it was made.

A stage's version is a hash of the behaviour of the packs named in its `shaped_by` (the same
canonical fingerprint `index_version` uses, so editing prose or a section the pack lists under
`answer_time_sections`, such as recall's, changes nothing), the stage's own
name and `revision` (bumped when the stage's code changes what it derives, which no pack shows),
and the ids of any models involved. A derived row whose version differs from its stage's current
one is stale and is rebuilt.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from capy.canonical import canonical_json
from capy.rules.hashing import HASH_LENGTH, pack_fingerprint
from capy.rules.overlays import MergedPack
from capy.rules.ruleset import RuleSet


def stage_version(rules: RuleSet, stage: str, model_ids: Iterable[str] = ()) -> str:
    view = rules.view("capsules").stage(stage)
    if view is None:
        raise KeyError(f"no active capsules stage named {stage!r}")
    packs = [_fingerprint(rules.packs[name]) for name in sorted(view.shaped_by)]
    payload: dict[str, Any] = {"stage": stage, "packs": packs, "models": sorted(model_ids)}
    if view.revision is not None:  # absent on a stage never revised: its version stays as it was
        payload["revision"] = view.revision
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()[:HASH_LENGTH]


def _fingerprint(pack: MergedPack) -> dict[str, Any]:
    """The pack's fingerprint, less the stages' revisions when it is the capsules pack: a
    revision speaks for its own stage alone, so bumping the chunk stage's does not rebuild what
    the stages shaped by the capsules pack (extract, link, summarise) derived."""
    fingerprint = pack_fingerprint(pack)
    stages = fingerprint["body"].get("stages") if pack.name == "capsules" else None
    if isinstance(stages, list):
        fingerprint["body"]["stages"] = [
            {key: value for key, value in item.items() if key != "revision"}
            if isinstance(item, dict)
            else item
            for item in stages
        ]
    return fingerprint


def current_versions(rules: RuleSet) -> dict[str, str]:
    """Every live stage's version now (stages that need a model add its id when they run)."""
    return {
        stage.name: stage_version(rules, stage.name) for stage in rules.view("capsules").live_stages
    }
