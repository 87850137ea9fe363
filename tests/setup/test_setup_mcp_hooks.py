"""`capy setup --mcp-hooks`: PreToolUse and PostToolUse run as calls to capy's `capy_hook` tool.

Real project and home folders; the written settings are read back as the host would read them,
and the tool-call template is filled from golden payloads the way Claude Code fills `${path}`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

SETTINGS = ".claude/settings.json"
PAYLOADS = Path(__file__).resolve().parents[1] / "hooks" / "payloads" / "claude-code"
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
USER_HOOKS = {
    "permissions": {"deny": ["Bash(rm -rf:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "mcp_tool", "server": "fmt", "tool": "go"}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def _hooks(workspace) -> dict:
    return json.loads((workspace.project / SETTINGS).read_text(encoding="utf-8"))["hooks"]


def _mcp_spec():
    from capy.rules import load_rules

    platform = load_rules(None).view("platforms").platform("claude-code")
    return platform.config.mcp_hooks


def _capy_handlers(hooks: dict) -> dict[str, list[tuple[str | None, dict]]]:
    """Every capy handler by event, with its group's matcher; the user's are left out."""
    found: dict[str, list] = {}
    for event, groups in hooks.items():
        for group in groups:
            for handler in group["hooks"]:
                if handler.get("server") == "capy" or "capy hook" in handler.get("command", ""):
                    found.setdefault(event, []).append((group.get("matcher"), handler))
    return found


def test_mcp_hooks_write_one_tool_call_per_matcher_for_tool_events_only(
    workspace, run_shared_setup
):
    code, out, err = run_shared_setup("--mcp-hooks")
    assert (code, err) == (0, "")
    assert "note: PreToolUse and PostToolUse now call capy's MCP tool `capy_hook`" in out
    spec = _mcp_spec()
    capy = _capy_handlers(_hooks(workspace))
    for event in TOOL_EVENTS:
        assert [matcher for matcher, _ in capy[event]] == [m.matcher for m in spec.matchers]
        for (_, handler), group in zip(capy[event], spec.matchers, strict=True):
            assert handler == {
                "type": "mcp_tool",
                "timeout": 10,
                "server": "capy",
                "tool": "capy_hook",
                "input": {"event": event, **spec.input, **group.input},
            }
    bash = dict(capy["PreToolUse"])["Bash"]["input"]
    assert bash["command"] == "${tool_input.command}" and bash["session_id"] == "${session_id}"
    # Events that can fire before the server connects stay command hooks.
    assert capy["SessionStart"] == [
        (None, {"type": "command", "command": "capy hook --platform claude-code SessionStart"})
    ]
    assert all(
        "command" in handler for event in set(capy) - set(TOOL_EVENTS) for _, handler in capy[event]
    )


def test_mcp_hooks_second_run_changes_nothing(workspace, run_shared_setup):
    workspace.write(SETTINGS, USER_HOOKS)
    assert run_shared_setup("--mcp-hooks")[0] == 0
    before = workspace.files()
    code, out, _ = run_shared_setup("--mcp-hooks")
    assert code == 0 and "nothing to change" in out
    assert workspace.files() == before
    assert run_shared_setup("--mcp-hooks", "--dry-run")[1].startswith("nothing to change")


def test_undo_removes_exactly_capys_entries_and_keeps_the_users(workspace, run_shared_setup):
    original = workspace.write(SETTINGS, USER_HOOKS).read_bytes()
    assert run_shared_setup("--mcp-hooks")[0] == 0
    assert _capy_handlers(_hooks(workspace))
    code, out, _ = run_shared_setup("--undo")
    assert code == 0 and "removed capy from" in out
    assert json.loads((workspace.project / SETTINGS).read_bytes()) == json.loads(original)
    assert not (workspace.project / ".mcp.json").exists()


@pytest.mark.parametrize("first, second", [((), ("--mcp-hooks",)), (("--mcp-hooks",), ())])
def test_switching_modes_replaces_capys_hooks_and_never_the_users(
    workspace, run_shared_setup, first, second
):
    workspace.write(SETTINGS, USER_HOOKS)
    assert run_shared_setup(*first)[0] == 0
    assert run_shared_setup(*second)[0] == 0
    switched = _hooks(workspace)
    assert run_shared_setup("--undo")[0] == 0  # from scratch, for comparison
    assert run_shared_setup(*second)[0] == 0
    assert switched == _hooks(workspace)  # the same entries as a fresh setup in that mode
    capy = _capy_handlers(switched)
    calls = [h for event in TOOL_EVENTS for _, h in capy[event] if h.get("type") == "mcp_tool"]
    commands = [h for event in TOOL_EVENTS for _, h in capy[event] if "command" in h]
    assert (bool(calls), bool(commands)) == ((True, False) if second else (False, True))
    for event, groups in USER_HOOKS["hooks"].items():
        for group in groups:
            assert group in switched[event]


@pytest.mark.parametrize("platform", ["codex", "gemini", "cursor", "opencode"])
def test_other_platforms_refuse_mcp_hooks_and_write_nothing(workspace, run_shared_setup, platform):
    workspace.user_settings("codex")
    before = workspace.files()
    code, out, err = run_shared_setup("--platform", platform, "--mcp-hooks")
    assert code == 2 and out == ""
    assert "has no hook type that calls an MCP tool" in err and "without --mcp-hooks" in err
    assert len(err.strip().splitlines()) == 1
    assert workspace.files() == before


def _fill(template: dict[str, str], payload: dict) -> dict[str, str]:
    """`${path}` substitution as the host does it: a missing field becomes empty."""
    from capy.rules.views.platforms import read_path

    def value(match: re.Match) -> str:
        found = read_path(payload, match[1])
        return "" if found is None else str(found)

    return {name: PLACEHOLDER.sub(value, text) for name, text in template.items()}


@pytest.mark.parametrize(
    "payload_name",
    [
        "PreToolUse-bash-curl.json",
        "PreToolUse-bash-plain.json",
        "PreToolUse-webfetch.json",
        "PreToolUse-capy-execute-denied.json",
        "PreToolUse-read.json",
    ],
)
def test_tool_call_answers_like_the_command_hook(workspace, run_shared_setup, payload_name):
    from capy.api.hooks import hook_reply
    from capy.api.workspace import Workspace
    from capy.hooks import handle

    assert run_shared_setup("--mcp-hooks")[0] == 0
    text = (PAYLOADS / payload_name).read_text(encoding="utf-8")
    raw = text.replace("$CWD", str(workspace.project)).encode()
    payload = json.loads(raw)
    event = payload["hook_event_name"]
    groups = [(m, h) for m, h in _capy_handlers(_hooks(workspace))[event] if m is not None]
    matched = [h for m, h in groups if re.fullmatch(m, payload["tool_name"])]
    assert len(matched) == 1, f"one matcher group must take {payload['tool_name']}"
    arguments = _fill(matched[0]["input"], payload)
    flat = {name: arguments.pop(name) for name in ("event", "session_id", "cwd", "tool_name")}
    assert flat["event"] == event and flat["tool_name"] == payload["tool_name"]

    # One-time guidance is remembered per session: the reference run gets a session of its own.
    reference = json.dumps({**payload, "session_id": payload["session_id"] + "-ref"}).encode()
    expected = handle(event, reference, platform="claude-code", project_dir=workspace.project)
    reply = hook_reply(Workspace(workspace.project), **flat, tool_input=arguments)
    assert expected.stdout  # each of these payloads gets an answer, so equality means something
    assert reply.text == expected.stdout


def test_doctor_counts_tool_call_hooks_as_registered(workspace, run_shared_setup):
    from capy.config.paths import home_dir
    from capy.rules import load_rules
    from capy.setup.status import registration

    assert run_shared_setup("--mcp-hooks")[0] == 0
    pack = load_rules(workspace.project).view("platforms")
    found = registration(pack, pack.platform("claude-code"), workspace.project, home_dir())
    assert found.hooks == {SETTINGS: found.events}
    assert {"PreToolUse", "PostToolUse"} <= found.hooked_events
