"""PreCompact: keep a snapshot of the session (at most the pack's budget) for SessionStart to
re-inject after the compaction, and hand the session's events and snapshot over to the detached
drainer (capy.hooks.ended_sessions), which saves them to the knowledge base once this hook has
exited; the capture spool's drainer begins then too."""

from __future__ import annotations

from capy.hooks.capture import drain_if_due
from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict
from capy.hooks.snapshot import build_snapshot
from capy.hooks.state import StateBusy, session_state


def handle(context: HookContext) -> Verdict:
    saved = _snapshot(context)
    if saved is None:
        drain_if_due(context)
        return Verdict()
    from capy.hooks.ended_sessions import save_in_background

    snapshot = saved["snapshot"]
    save_in_background(context, saved, snapshot)
    # Platforms that take context here (OpenCode's compaction prompt) get the snapshot now.
    return Verdict(context=snapshot)


def _snapshot(context: HookContext) -> dict | None:
    """The session's state with its new snapshot, stored; None when there is none to take."""
    hook = context.hook
    if not context.routing["escape_hatches"]["switches"].get("precompact_snapshot", True):
        return None
    try:
        with session_state(context.data_dir, hook.session_id) as state:
            if not state.get("events"):
                return None  # nothing happened worth carrying over
            budget = context.routing["precompact"]
            state["snapshot"] = build_snapshot(budget, hook.session_id, state)
            return dict(state)
    except (StateBusy, OSError) as problem:
        context.note(
            f"no snapshot was taken, the session state is unusable ({type(problem).__name__})"
        )
        return None
