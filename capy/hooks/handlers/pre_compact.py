"""PreCompact: keep a snapshot of the session (at most the pack's budget) for SessionStart to
re-inject after the compaction, and save the session's events to the knowledge base; the capture
spool's drainer, started first, begins once this hook has exited."""

from __future__ import annotations

from capy.hooks.capture import drain_if_due
from capy.hooks.context import HookContext
from capy.hooks.knowledge import persist_session
from capy.hooks.outcome import Verdict
from capy.hooks.snapshot import build_snapshot
from capy.hooks.state import StateBusy, session_state


def handle(context: HookContext) -> Verdict:
    drain_if_due(context)  # first, while the process is small: it waits for this hook's exit
    return _snapshot(context)


def _snapshot(context: HookContext) -> Verdict:
    hook = context.hook
    if not context.routing["escape_hatches"]["switches"].get("precompact_snapshot", True):
        return Verdict()
    try:
        with session_state(context.data_dir, hook.session_id) as state:
            if not state.get("events"):
                return Verdict()  # nothing happened worth carrying over
            snapshot = build_snapshot(context.routing["precompact"], hook.session_id, state)
            state["snapshot"] = snapshot
            saved = dict(state)
    except (StateBusy, OSError) as problem:
        context.note(
            f"no snapshot was taken, the session state is unusable ({type(problem).__name__})"
        )
        return Verdict()
    problem = persist_session(context.project_root, hook.session_id, saved, snapshot)
    if problem:
        context.note(problem)
    # Platforms that take context here (OpenCode's compaction prompt) get the snapshot now.
    return Verdict(context=snapshot)
