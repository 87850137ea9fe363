"""UserPromptSubmit: remember what the user asked for (the snapshot ranks it high) and keep it
as a capsule."""

from __future__ import annotations

from capy.hooks.capture import capture_safely
from capy.hooks.context import HookContext
from capy.hooks.events import USER_PROMPT, describe, record
from capy.hooks.outcome import Verdict
from capy.hooks.state import StateBusy, session_state


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_prompt

    capture_safely(context, capture_prompt)
    text = describe(context.hook.prompt)
    config = context.routing.get("session_events")
    if text is None or config is None:
        return Verdict()
    try:
        with session_state(context.data_dir, context.hook.session_id) as state:
            record(state, config, USER_PROMPT, text)
    except (StateBusy, OSError) as problem:
        context.note(f"the prompt was not recorded ({type(problem).__name__})")
    return Verdict()
