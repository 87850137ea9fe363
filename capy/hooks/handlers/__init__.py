"""One handler module per canonical event; each exposes `handle(context) -> Verdict`.

Imported by name only when its event fires, so a PreToolUse hook never loads the code (or the
imports) of the session-boundary handlers.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.hooks.context import HookContext
    from capy.hooks.outcome import Verdict

MODULE_FOR = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use",
    "UserPromptSubmit": "user_prompt_submit",
    "SessionStart": "session_start",
    "PreCompact": "pre_compact",
    "SessionEnd": "session_end",
    "Stop": "stop",
    "SubagentStop": "stop",
}


def run_handler(context: HookContext) -> Verdict:
    name = f"{__name__}.{MODULE_FOR[context.hook.event]}"
    __import__(name)  # importlib.import_module, without importing importlib
    module = sys.modules[name]
    return module.handle(context)
