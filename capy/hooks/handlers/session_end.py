"""SessionEnd: keep the session's end as a capsule, and hand the session's events over to the
detached drainer (capy.hooks.ended_sessions: a record on disk, saved to the knowledge base as
kind `session` once this hook has exited)."""

from __future__ import annotations

from capy.hooks.capture import capture_safely
from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict
from capy.hooks.state import read_state


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_boundary
    from capy.hooks.ended_sessions import save_in_background

    capture_safely(context, capture_boundary)
    save_in_background(context, read_state(context.data_dir, context.hook.session_id))
    return Verdict()
