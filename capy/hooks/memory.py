"""Memory at the hooks: what was learned, said at SessionStart and UserPromptSubmit, and
enforced at PreToolUse. Reads only the memory digest (capy.memory.digest); with no digest, or a
broken one, memory is silent and the hook answers as it would without it."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.hooks.context import HookContext
    from capy.hooks.outcome import Verdict

BLOCK_RULE_PREFIX = "memory."


def _digest(context: HookContext, part: str = "") -> dict[str, Any] | None:
    from capy.memory.digest import read_digest

    return read_digest(context.data_dir, context.rules["project_root"], part)


def session_start_text(context: HookContext) -> str:
    try:
        digest = _digest(context)
        if digest is None:
            return ""
        from capy.memory.inject import session_start_text as text_for

        return text_for(digest)[0]
    except Exception as problem:  # memory must never stop the session from starting
        context.note(f"memory was not read ({type(problem).__name__})")
        return ""


def prompt_text(context: HookContext) -> str:
    """The records relevant to the prompt, and a note capsule saying which were shown (what
    later feedback is judged against)."""
    prompt = context.hook.prompt
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    try:
        from capy.memory.digest import PROMPT

        digest = _digest(context, PROMPT)
        if digest is None:
            return ""
        from capy.memory.inject import prompt_text as text_for

        text, shown = text_for(digest, prompt)
    except Exception as problem:
        context.note(f"memory was not read ({type(problem).__name__})")
        return ""
    if shown:
        from capy.hooks.capture import capture_safely

        capture_safely(context, lambda capture: _keep_injection(capture, shown))
    return text


def _keep_injection(capture: Any, shown: list[str]) -> None:
    content = "memory injected: " + ", ".join(item[:8] for item in shown)
    capture.keep("note", content, {"memory": {"op": "injected", "records": shown}})


def deny_verdict(context: HookContext) -> Verdict | None:
    """A deny when the Bash command breaks a blocking anti-pattern, else None."""
    hook = context.hook
    command = hook.tool_input.get("command") if hook.tool == "Bash" else None
    if not isinstance(command, str) or not command.strip():
        return None
    try:
        from capy.memory.digest import BLOCKING

        digest = _digest(context, BLOCKING)
        if digest is None:
            return None
        from capy.memory.blocking import deny_reason, denying_record

        record = denying_record(digest, command)
        if record is None:
            return None
        reason = deny_reason(digest, record)
    except Exception as problem:  # a broken digest must not block, nor stop the hook
        context.note(f"memory was not checked ({type(problem).__name__})")
        return None
    from capy.hooks.outcome import DENY, Verdict

    return Verdict(DENY, reason, rule_id=record["block"]["id"])
