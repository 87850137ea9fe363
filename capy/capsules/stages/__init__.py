"""The distillation pipeline's stages: each turns one capsule (or one scope) into derived rows.

A stage module exposes `run(context, n, capsule)` for `per: capsule` stages, or
`run_scope(context, scope)` for `per: scope` ones. Either may have slow work done first,
outside any transaction: `prepare(context, items)` for a whole claim of capsules, whose result
for capsule n reaches `run` as `prepared=` (the embed stage embeds a claim's chunks in one call
to the model), or `prepare_scope(context, scope)` (a chat request). A stage writes its
derived rows through the connection the worker hands it, inside the worker's transaction,
which also marks the job done: a job is done exactly when its rows exist. Each run first
removes the rows the same capsule got from an earlier run of the stage, so running a stage
twice, or after a rebuild, gives the same rows (idempotent by capsule, stage and derivation
version).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlcipher3

    from capy.rules.ruleset import RuleSet


@dataclass(frozen=True)
class StageContext:
    conn: sqlcipher3.Connection
    rules: RuleSet
    stage: str
    version: str  # the derivation version every row this run writes records
    # What optional stages may use when present: a configured chat model (capy.llm.ChatModel)
    # and the semantic layer's embedder (capy.capsules.stages.embed.Embedder).
    llm: Any = None
    embedder: Any = None


def stage_module(name: str) -> Any:
    """The module implementing stage `name` (`capy.capsules.stages.<name>`)."""
    return importlib.import_module(f"capy.capsules.stages.{name}")
