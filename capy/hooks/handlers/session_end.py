"""SessionEnd: keep the session's end as a capsule and start the spool's drainer (which begins
once this hook has exited), then save the session's events to the knowledge base, searchable as
kind `session`."""

from __future__ import annotations

from capy.hooks.capture import capture_safely, drain_if_due
from capy.hooks.context import HookContext
from capy.hooks.knowledge import persist_session
from capy.hooks.outcome import Verdict
from capy.hooks.state import forget_session, read_state


def handle(context: HookContext) -> Verdict:
    """Save the events, then drop the state file: the session is over, and state files of
    finished sessions would otherwise pile up in the data dir."""
    from capy.hooks.capture_events import capture_boundary

    capture_safely(context, capture_boundary)
    # Now, while this process is small (a fork copies its page tables): the drainer waits for
    # this hook to exit before it does anything.
    drain_if_due(context)
    hook = context.hook
    state = read_state(context.data_dir, hook.session_id)
    problem = persist_session(context.project_root, hook.session_id, state)
    if problem:
        context.note(problem)  # the state stays, so the next PreCompact or SessionEnd retries
    else:
        forget_session(context.data_dir, hook.session_id)
    return Verdict()
