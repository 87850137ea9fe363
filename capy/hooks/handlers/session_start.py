"""SessionStart: the routing block on a fresh start; after a compaction, the snapshot too; the
project's learned anti-patterns, preferences and principles. The session's start is kept as a
capsule."""

from __future__ import annotations

from capy.hooks.capture import capture_safely
from capy.hooks.context import HookContext
from capy.hooks.outcome import Verdict
from capy.hooks.snapshot import fit_bytes
from capy.hooks.state import StateBusy, session_state

COMPACT_SOURCE = "compact"


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_boundary

    capture_safely(context, capture_boundary)
    hatches = context.routing["escape_hatches"]
    parts = []
    if hatches["switches"].get("session_start", True):
        block = context.routing["routing_block"]["text"].strip()
        parts.append(fit_bytes(block, hatches["session_start_max_bytes"]))
    snapshot = _snapshot_after_compaction(context)
    if snapshot:
        parts.append(snapshot)
    from capy.hooks.memory import session_start_text

    parts.append(session_start_text(context))
    # The user's own cap (config `hooks.session_start_max_bytes`, 0 = nothing) bounds it all.
    text = fit_bytes("\n\n".join(part for part in parts if part), _user_cap(context))
    return Verdict(context=text) if text.strip() else Verdict()


def _snapshot_after_compaction(context: HookContext) -> str | None:
    hook = context.hook
    switches = context.routing["escape_hatches"]["switches"]
    if hook.source != COMPACT_SOURCE or not switches.get("precompact_snapshot", True):
        return None
    try:
        with session_state(context.data_dir, hook.session_id) as state:
            # Said once: a second SessionStart for the same compaction must not repeat it.
            return state.pop("snapshot", None)
    except (StateBusy, OSError) as problem:
        context.note(f"the pre-compaction snapshot could not be read ({type(problem).__name__})")
        return None


def _user_cap(context: HookContext) -> int:
    return int(context.rules["settings"]["session_start_max_bytes"])
