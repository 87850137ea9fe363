"""PreToolUse routing decisions on a table of calls (Claude Code shapes), and the escape hatches:
allowlists from the pack and from config, switches, and guidance once per session."""

from __future__ import annotations

import json

import pytest

from capy.hooks import handle


def pre_tool(tool: str, tool_input: dict, project, session: str = "table") -> dict:
    payload = {
        "session_id": session,
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    outcome = handle("PreToolUse", json.dumps(payload).encode(), platform="claude-code")
    assert outcome.exit_code == 0 and outcome.stderr == ""
    return json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else {}


def verdict(answer: dict) -> str:
    """A short name for what the hook did to the call."""
    if "updatedInput" in answer:
        command = answer["updatedInput"].get("command", "")
        return "redirect" if command.startswith("echo ") else "rewrite"
    if "permissionDecision" in answer:
        return answer["permissionDecision"]
    return "guide" if "additionalContext" in answer else "pass"


BASH_TABLE = [
    ("curl https://api.example.com/v1/items", "redirect"),
    ("curl -s https://api.example.com/v1/items | jq .", "redirect"),
    ("cd /tmp && wget https://example.com/docs/page.html", "redirect"),
    ("echo $(curl -s https://example.com/version)", "redirect"),
    ("wget -qO- https://example.com/data.json", "redirect"),
    ("curl -s -o - https://example.com/data.json", "redirect"),
    ("curl -s https://github.com/octo-org/octo-repo/issues/42", "redirect"),
    # escape hatches: silent downloads to a file, the CLIs capy recommends, loopback
    ("curl -sSL https://example.com/archive.tgz -o /tmp/archive.tgz", "pass"),
    ("wget -q -O /tmp/page.html https://example.com/page.html", "pass"),
    ("gh issue view 42 --repo octo-org/octo-repo --comments", "pass"),
    ("curl http://localhost:8000/health", "pass"),
    ("curl http://127.0.0.1:5000/api", "pass"),
    # not curl or wget at all
    ("echo curl is installed", "guide"),
]


@pytest.mark.parametrize(("command", "expected"), BASH_TABLE)
def test_bash_commands(command, expected, project):
    assert verdict(pre_tool("Bash", {"command": command}, project)) == expected


def test_issue_url_gets_the_forge_command(project):
    answer = pre_tool(
        "Bash", {"command": "curl -s https://github.com/octo-org/octo-repo/issues/42"}, project
    )
    assert (
        "gh issue view 42 --repo octo-org/octo-repo --comments" in answer["updatedInput"]["command"]
    )
    answer = pre_tool(
        "WebFetch", {"url": "https://gitlab.example.org/platform/api/-/merge_requests/5"}, project
    )
    assert answer["permissionDecision"] == "deny"
    assert (
        "GITLAB_HOST=gitlab.example.org glab mr view 5 --repo platform/api"
        in answer["permissionDecisionReason"]
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://docs.python.org/3/library/re.html", "deny"),
        ("https://github.com/octo-org/octo-repo/pull/1347", "deny"),
        ("http://localhost:3000/", "pass"),
        ("http://[::1]:8080/status", "pass"),
    ],
)
def test_web_fetch(url, expected, project):
    assert verdict(pre_tool("WebFetch", {"url": url, "prompt": "x"}, project)) == expected


def test_redirect_keeps_the_other_input_fields(project):
    answer = pre_tool("Bash", {"command": "curl https://x.example/a", "timeout": 5000}, project)
    assert answer["updatedInput"]["timeout"] == 5000
    assert answer["permissionDecision"] == "allow"  # the echo runs instead of the request


def test_subagent_prompt_gets_the_routing_block_once(project):
    answer = pre_tool("Agent", {"prompt": "Find callers", "description": "d"}, project)
    prompt = answer["updatedInput"]["prompt"]
    assert prompt.startswith("Find callers\n\n## capy:")
    assert pre_tool("Task", {"prompt": prompt, "description": "d"}, project) == {}


def test_guidance_is_given_once_per_session(project):
    first = pre_tool("Bash", {"command": "pytest -q"}, project, session="a")
    assert "capy_execute" in first["additionalContext"]
    assert pre_tool("Bash", {"command": "make"}, project, session="a") == {}
    assert "additionalContext" in pre_tool("Bash", {"command": "make"}, project, session="b")
    assert "additionalContext" in pre_tool("Read", {"file_path": "/x"}, project, session="a")


def test_unknown_and_mcp_tools_pass(project):
    assert pre_tool("mcp__github__create_issue", {"title": "t"}, project) == {}
    assert pre_tool("SomeFutureTool", {"command": "curl https://x.example"}, project) == {}


def test_capy_execute_gets_the_security_policies(project):
    answer = pre_tool("mcp__capy__capy_execute", {"language": "shell", "code": "rm -rf /"}, project)
    assert answer["permissionDecision"] == "deny"
    assert "security.deny-rm-rf-root" in answer["permissionDecisionReason"]
    assert (
        pre_tool("mcp__capy__capy_execute", {"language": "python", "code": "print(1)"}, project)
        == {}
    )


def test_user_permission_rules_decide_capy_execute(project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash(make deploy:*)"]}}))
    answer = pre_tool(
        "mcp__capy__capy_batch_execute",
        {"commands": [{"label": "d", "command": "make deploy prod"}]},
        project,
    )
    assert answer["permissionDecision"] == "ask"


def test_config_allowlists(project):
    (project / ".capy.toml").write_text(
        "[hooks]\n"
        'allow_commands = ["curl https://status.internal:*"]\n'
        'allow_domains = ["*.corp.example"]\n'
    )
    assert (
        verdict(pre_tool("Bash", {"command": "curl https://status.internal --max-time 2"}, project))
        == "pass"
    )
    assert (
        verdict(pre_tool("WebFetch", {"url": "https://wiki.corp.example/page"}, project)) == "pass"
    )
    assert (
        verdict(pre_tool("WebFetch", {"url": "https://corp.example.evil.test/"}, project)) == "deny"
    )


def test_config_switches_guidance_off(project):
    (project / ".capy.toml").write_text("[hooks]\nguidance = false\n")
    assert pre_tool("Bash", {"command": "pytest"}, project) == {}
    assert verdict(pre_tool("Bash", {"command": "curl https://x.example"}, project)) == "redirect"


def test_overlay_switches_the_web_fetch_deny_to_guidance(project, project_rules_dir):
    (project_rules_dir / "team.yaml").write_text(
        "pack: team-routing\nschema: overlay.v1\nversion: 1.0.0\n"
        'description: Let WebFetch through.\nrequires: ">=0.1"\nextends: routing\n'
        "patch:\n  escape_hatches:\n    switches:\n      deny: false\n"
    )
    answer = pre_tool("WebFetch", {"url": "https://docs.python.org/3/"}, project)
    assert "permissionDecision" not in answer
    assert "capy_fetch_and_index" in answer["additionalContext"]


def test_keyword_gated_rules_keep_their_examples_reachable():
    """Examples run without keywords; a match example lacking every keyword would pass
    `capy rules validate` yet never fire in a hook."""
    from capy.rules import load_rules

    routing = load_rules().pack("routing").data
    rules = [*routing["issue_urls"], *routing["escape_hatches"]["allow_commands"]]
    for rule in rules:
        for example in rule.get("examples", {}).get("match", []):
            assert any(k in example.lower() for k in rule.get("keywords", [""])), rule["id"]


def test_broken_settings_file_is_a_note_not_a_print(project, capsys):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    payload = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__capy__capy_execute",
        "tool_input": {"language": "shell", "code": "rm -rf /"},
    }
    outcome = handle("PreToolUse", json.dumps(payload).encode(), platform="claude-code")
    assert capsys.readouterr() == ("", "")  # handle() itself never prints
    assert json.loads(outcome.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert outcome.stderr.startswith("capy hook: warning: .claude/settings.json is not valid JSON")


def test_overlay_command_pattern_allow_rule(project, project_rules_dir):
    (project_rules_dir / "allow.yaml").write_text(
        "pack: team-allow\nschema: overlay.v1\nversion: 1.0.0\n"
        'description: Our status probe.\nrequires: ">=0.1"\nextends: routing\n'
        "patch:\n  escape_hatches:\n    allow_commands:\n"
        "      - id: team-allow.status-probe\n        status: active\n"
        '        since: "1.0.0"\n        description: The status probe prints one line.\n'
        "        kind: command\n        pattern: 'curl https://status.example/ping:*'\n"
        "        examples:\n          match: ['curl https://status.example/ping -m 2']\n"
        "          no_match: ['curl https://status.example/pingx']\n"
    )
    probe = pre_tool("Bash", {"command": "curl   https://status.example/ping -m 2"}, project)
    assert verdict(probe) == "pass"
    other = pre_tool("Bash", {"command": "curl https://status.example/pingx"}, project)
    assert verdict(other) == "redirect"
