"""capy's own executor tools get the permission policies Bash would get.

The agent's host applies its permission rules to Bash, but code sent to capy_execute runs in
capy's sandbox, out of the host's sight; so the hook judges it with `capy.security`. This path
loads the full rule set (rare compared with Bash calls, and correctness beats speed here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capy.hooks.outcome import ASK, DENY

_SEVERITY = {DENY: 2, ASK: 1}


def judge_executor_call(
    project_root: Path, tool_input: dict[str, Any]
) -> tuple[str | None, str, list[str]]:
    """The most severe of deny/ask over every command or snippet in the call, its reason, and
    the warnings the policy loader had (a broken settings file), as lines for stderr."""
    import contextlib
    import io

    captured = io.StringIO()
    # The policy loader prints its warnings; `handle` must not print, so they become notes.
    with contextlib.redirect_stderr(captured):
        decision, reason = _judge(project_root, tool_input)
    return decision, reason, [line for line in captured.getvalue().splitlines() if line.strip()]


def _judge(project_root: Path, tool_input: dict[str, Any]) -> tuple[str | None, str]:
    from capy.security import check_command

    worst: tuple[str | None, str] = (None, "")
    for text, language in _snippets(tool_input):
        try:
            decision = check_command(text, project_dir=project_root, language=language)
        except ValueError:
            continue  # an unknown language: the executor refuses it with a clear message
        outcome = str(decision.decision)
        if _SEVERITY.get(outcome, 0) > _SEVERITY.get(worst[0] or "", 0):
            worst = (outcome, _reason(decision))
    return worst


def _snippets(tool_input: dict[str, Any]) -> list[tuple[str, str]]:
    language = tool_input.get("language")
    language = language if isinstance(language, str) and language.strip() else "shell"
    found = []
    for name in ("code", "command"):
        value = tool_input.get(name)
        if isinstance(value, str) and value.strip():
            found.append((value, language if name == "code" else "shell"))
    commands = tool_input.get("commands")
    for item in commands if isinstance(commands, list) else []:
        value = item.get("command") if isinstance(item, dict) else item
        if isinstance(value, str) and value.strip():
            found.append((value, "shell"))
    return found


def _reason(decision: Any) -> str:
    rule = f" by {decision.rule}" if decision.rule else ""
    source = f" ({decision.source})" if decision.source else ""
    detail = f": {decision.reason}" if decision.reason else ""
    return f"capy: {decision.decision}{rule}{source}{detail}"
