"""PostToolUse and PostToolUseFailure: record one compact event for the session, and keep the
call (or its error, or its diff) as a capsule."""

from __future__ import annotations

from capy.hooks.capture import capture_safely, redacted_event
from capy.hooks.context import HookContext
from capy.hooks.events import ERROR, categorise, event_entry, failure_text, response_error
from capy.hooks.outcome import Verdict
from capy.hooks.state import append_event


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_tool_call

    capture_safely(context, capture_tool_call)
    hook = context.hook
    config = context.routing.get("session_events")
    if not hook.tool or config is None:
        return Verdict()
    error = hook.error if hook.event == "PostToolUseFailure" else response_error(hook.tool_response)
    if error is not None or hook.event == "PostToolUseFailure":
        event = (ERROR, failure_text(hook.tool, hook.tool_input, error))
    else:
        event = categorise(config, hook.tool, hook.tool_input)
    if event is None:
        return Verdict()
    category, text = event
    if (text := redacted_event(context, text)) is None:
        return Verdict()
    try:  # appended, not rewritten: the state takes it in when it is next read
        append_event(context.data_dir, hook.session_id, event_entry(config, category, text))
    except OSError as problem:
        context.note(f"the session event was not recorded ({type(problem).__name__})")
    return Verdict()
