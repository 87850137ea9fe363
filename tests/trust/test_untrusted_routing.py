"""The routing pack stays free for a project, its security check included: the hook's check of
capy's executor calls only asks earlier what the executor asks again before it runs anything,
under the same security pack (whose project limits hold). A project that switches the hook's
check off loosens nothing."""

from __future__ import annotations

import json

from capy.api.execute import policy_refusal
from capy.api.workspace import Workspace
from capy.hooks import handle
from capy.rules import load_rules

DANGEROUS = {"language": "shell", "code": "rm -rf /"}


def _pre_tool(project_dir, tool_input: dict) -> dict:
    payload = {
        "session_id": "s1",
        "cwd": str(project_dir),
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__capy__capy_execute",
        "tool_input": tool_input,
    }
    outcome = handle("PreToolUse", json.dumps(payload).encode(), platform="claude-code")
    return json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {}


def test_a_project_without_the_hooks_check_still_gets_the_executors_refusal(project_dir, ship):
    assert _pre_tool(project_dir, DANGEROUS)["permissionDecision"] == "deny"
    ship("no-check.yaml", "routing", "disable: [routing.capy-security-check]\n")
    assert load_rules(project_dir).ignored == []  # routing is free: the overlay applies
    assert _pre_tool(project_dir, DANGEROUS) == {}
    # Judged only, never run: the executor's own check, before any sandbox starts.
    refusal = policy_refusal(Workspace(project_dir), DANGEROUS["code"], language="shell")
    assert refusal is not None
    assert refusal.startswith("Refused by the permission rule security.deny-rm-rf-root")
