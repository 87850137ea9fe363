"""Stop and SubagentStop: keep the turn's last response as a capsule (read from the end of the
transcript), and add nothing else. They fire after every turn, so they stay cheap: no drainer
starts here, and the session reaches the knowledge base at PreCompact and SessionEnd instead."""

from __future__ import annotations

from capy.hooks.capture import capture_safely
from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_response

    capture_safely(context, capture_response)
    return Verdict()
