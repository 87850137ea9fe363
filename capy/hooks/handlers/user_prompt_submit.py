"""UserPromptSubmit: remember what the user asked for (the snapshot ranks it high), keep it as a
capsule, and give the agent the learned records relevant to it."""

from __future__ import annotations

from capy.hooks.capture import capture_safely, redacted_event
from capy.hooks.context import HookContext
from capy.hooks.events import USER_PROMPT, describe, event_entry
from capy.hooks.outcome import Verdict
from capy.hooks.state import append_event


def handle(context: HookContext) -> Verdict:
    from capy.hooks.capture_events import capture_prompt
    from capy.hooks.memory import prompt_text

    capture_safely(context, capture_prompt)
    remembered = prompt_text(context) if context.adapter.accepts_context("UserPromptSubmit") else ""
    answer = Verdict(context=remembered) if remembered else Verdict()
    text = describe(context.hook.prompt)
    config = context.routing.get("session_events")
    if text is None or config is None or (text := redacted_event(context, text)) is None:
        return answer
    try:  # appended, as a tool call's event is (capy.hooks.state)
        append_event(
            context.data_dir, context.hook.session_id, event_entry(config, USER_PROMPT, text)
        )
    except OSError as problem:
        context.note(f"the prompt was not recorded ({type(problem).__name__})")
    return answer
