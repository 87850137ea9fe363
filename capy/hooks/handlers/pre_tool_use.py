"""PreToolUse: route the call per the routing pack (deny, redirect, guide, append the routing
block, check capy's own executor calls against the permission policies)."""

from __future__ import annotations

from capy.hooks.context import HookContext
from capy.hooks.outcome import ALLOW, ASK, DENY, Verdict
from capy.hooks.routing import Selection, render
from capy.hooks.state import StateBusy, read_state, session_state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Long enough to recognise the command in a message, short enough not to repeat a script.
_QUOTED_COMMAND_CHARS = 200


def handle(context: HookContext) -> Verdict:
    hook = context.hook
    if not hook.tool:
        return Verdict()
    if hook.tool == "Bash":
        from capy.hooks.memory import deny_verdict

        denied = deny_verdict(context)
        if denied is not None:
            return denied
    selection = context.router.select(hook.tool, hook.tool_input, _shown_once(context))
    if selection is None:
        return Verdict()
    action = _ACTIONS[selection.action]
    return action(context, selection)


def _shown_once(context: HookContext):
    """Whether this session was already given a guidance (read without the lock, lazily)."""
    cache: list[list[str]] = []

    def shown(guidance_id: str) -> bool:
        if not cache:
            state = read_state(context.data_dir, context.hook.session_id, events=False)
            cache.append(state.get("guided", []))
        return guidance_id in cache[0]

    return shown


def _deny(context: HookContext, selection: Selection) -> Verdict:
    return Verdict(DENY, _message(context, selection), rule_id=selection.rule["id"])


def _redirect(context: HookContext, selection: Selection) -> Verdict:
    """Replace the command with an echo of the advice: agents retry a plain deny with small
    variations, while an answer that reads like output ends the loop."""
    message = _message(context, selection)
    if not context.adapter.can_rewrite_input or context.hook.tool != "Bash":
        return Verdict(DENY, message, rule_id=selection.rule["id"])
    rewritten = {**context.hook.tool_input, "command": f"echo {_shell_quoted(message)}"}
    return Verdict(ALLOW, message, updated_input=rewritten, rule_id=selection.rule["id"])


def _issue_cli(context: HookContext, selection: Selection) -> Verdict:
    return (
        _redirect(context, selection) if context.hook.tool == "Bash" else _deny(context, selection)
    )


def _guide(context: HookContext, selection: Selection) -> Verdict:
    """The tool's guidance, once per session, where the platform takes context here."""
    hook = context.hook
    if not context.adapter.accepts_context(hook.event):
        return Verdict()
    guidance_id = selection.rule.get("guidance_ref", "")
    text = context.router.guidance_text(guidance_id, hook.native_tool or hook.tool or "")
    if text is None:
        return Verdict()
    try:
        with session_state(context.data_dir, hook.session_id) as state:
            shown = state.setdefault("guided", [])
            if guidance_id in shown:
                return Verdict()
            shown.append(guidance_id)
    except (StateBusy, OSError) as problem:
        # Without the state capy cannot tell whether this was said already; saying nothing
        # is the quieter mistake.
        context.note(f"guidance skipped, the session state is unusable ({type(problem).__name__})")
        return Verdict()
    return Verdict(context=text, rule_id=selection.rule["id"])


def _append_routing(context: HookContext, selection: Selection) -> Verdict:
    field = selection.rule.get("field") or "prompt"
    prompt = context.hook.tool_input.get(field)
    block = context.routing["routing_block"]["text"].strip()
    if not isinstance(prompt, str) or block in prompt or not context.adapter.can_rewrite_input:
        return Verdict()
    rewritten = {**context.hook.tool_input, field: f"{prompt.rstrip()}\n\n{block}"}
    return Verdict(ALLOW, None, updated_input=rewritten, rule_id=selection.rule["id"])


def _security_check(context: HookContext, selection: Selection) -> Verdict:
    from capy.hooks.security import judge_executor_call

    decision, reason, warnings = judge_executor_call(context.project_root, context.hook.tool_input)
    for warning in warnings:
        context.note(warning.removeprefix("capy: "))
    if decision in (DENY, ASK):
        return Verdict(decision, reason, rule_id=selection.rule["id"])
    return Verdict()


def _message(context: HookContext, selection: Selection) -> str:
    if selection.issue is not None:
        return selection.issue.message
    tool_input: dict[str, Any] = context.hook.tool_input
    command = tool_input.get("command")
    url = tool_input.get("url")
    urls = tool_input.get("urls")
    if not isinstance(url, str) and isinstance(urls, list) and urls:
        url = urls[0]  # tools that take several URLs (VS Code's fetch_webpage)
    return render(
        selection.rule.get("message") or "",
        command=_shortened(command) if isinstance(command, str) else "",
        url=url if isinstance(url, str) else "",
    ).strip()


def _shell_quoted(text: str) -> str:
    """`shlex.quote` for any text (single quotes, each inner one closed, escaped and reopened),
    without importing shlex on the per-call path."""
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _shortened(command: str) -> str:
    command = " ".join(command.split())
    if len(command) <= _QUOTED_COMMAND_CHARS:
        return command
    return command[: _QUOTED_COMMAND_CHARS - 1] + "…"


_ACTIONS = {
    "deny": _deny,
    "redirect": _redirect,
    "issue-cli": _issue_cli,
    "guide": _guide,
    "append-routing": _append_routing,
    "security-check": _security_check,
}
