"""Stop and SubagentStop: nothing to add. They fire after every turn, so they stay free; the
session reaches the knowledge base at PreCompact and SessionEnd instead."""

from __future__ import annotations

from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict


def handle(context: HookContext) -> Verdict:
    return Verdict()
