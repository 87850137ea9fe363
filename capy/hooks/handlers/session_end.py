"""SessionEnd: keep the session's end as a capsule, hand the session's events over to the
detached drainer (capy.hooks.ended_sessions: a record on disk, saved to the knowledge base as
kind `session` once this hook has exited), and start that drainer."""

from __future__ import annotations

from capy.hooks.capture import capture_safely, drain_if_due, start_context_drainer
from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict
from capy.hooks.state import read_state


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_boundary
    from capy.hooks.ended_sessions import hand_over

    capture_safely(context, capture_boundary)
    hook = context.hook
    state = read_state(context.data_dir, hook.session_id)
    try:
        handed = hand_over(context.data_dir, context.rules["project_root"], hook.session_id, state)
    except OSError:
        _save_here(context, state)  # no record: save it as the hook always did
        handed = False
    # Now, while this process is small (a fork copies its page tables): a drainer waits for
    # this hook to exit before it does anything. The capture drainer saves the records too;
    # with capture off, or a drainer of another process already past them, this one does.
    drain_if_due(context)
    if handed:
        try:
            start_context_drainer(context, sessions_only=True)
        except OSError:
            _save_records_here(context)
    return Verdict()


def _save_here(context: HookContext, state: dict) -> None:
    """The session saved in this process; the state is dropped once saved and otherwise kept,
    so the next PreCompact or SessionEnd retries."""
    from capy.hooks.knowledge import persist_session
    from capy.hooks.state import forget_session

    problem = persist_session(context.project_root, context.hook.session_id, state)
    if problem:
        context.note(problem)
    else:
        forget_session(context.data_dir, context.hook.session_id)


def _save_records_here(context: HookContext) -> None:
    from capy.hooks.ended_sessions import save_ended_sessions

    save_ended_sessions(context.data_dir)
