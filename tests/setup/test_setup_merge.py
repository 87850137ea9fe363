"""Setup merges into the user's files, never twice, and undo takes out exactly what it added."""

from __future__ import annotations

import json
import tomllib

import pytest

from tests.setup.conftest import PLATFORMS, USER_FILES


def parsed(files: dict[str, bytes]) -> dict[str, object]:
    """File contents by meaning: JSON and TOML parsed, anything else as text."""
    out: dict[str, object] = {}
    for name, data in files.items():
        text = data.decode()
        if name.endswith(".json"):
            out[name] = json.loads(text)
        elif name.endswith(".toml"):
            out[name] = tomllib.loads(text)
        else:
            out[name] = text
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("scope", [(), ("--global",)], ids=["project", "global"])
def test_second_run_changes_nothing(workspace, run_shared_setup, platform, scope) -> None:
    code, out, err = run_shared_setup("--platform", platform, *scope)
    assert (code, err) == (0, "")
    first = workspace.files()
    assert first, "setup wrote no file"
    code, out, _ = run_shared_setup("--platform", platform, *scope)
    assert code == 0
    assert "nothing to change" in out
    assert workspace.files() == first


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_event_and_the_server_are_registered(workspace, run_shared_setup, platform) -> None:
    from capy.config.paths import home_dir
    from capy.rules import load_rules
    from capy.setup.status import registration

    assert run_shared_setup("--platform", platform)[0] == 0
    pack = load_rules(workspace.project).view("platforms")
    found = registration(pack, pack.platform(platform), workspace.project, home_dir())
    assert found.mcp, "the MCP server was not registered"
    assert found.hooked_events == found.events
    assert not found.problems and not found.doubled_events


@pytest.mark.parametrize("platform", PLATFORMS)
def test_undo_keeps_the_users_own_entries(workspace, run_shared_setup, platform) -> None:
    workspace.user_settings(platform)
    before = workspace.files()
    assert run_shared_setup("--platform", platform)[0] == 0
    during = parsed(workspace.files())
    for name, content in USER_FILES[platform].items():
        assert _contains(during[f"project/{name}"], content), f"{name} lost the user's entries"
    code, out, err = run_shared_setup("--platform", platform, "--undo")
    assert (code, err) == (0, ""), out
    assert parsed(workspace.files()) == parsed(before)


def test_undo_restores_codex_toml_byte_for_byte(workspace, run_shared_setup) -> None:
    workspace.user_settings("codex")
    original = (workspace.project / ".codex/config.toml").read_text()
    run_shared_setup("--platform", "codex")
    added = (workspace.project / ".codex/config.toml").read_text()
    assert added.startswith(original)
    assert tomllib.loads(added)["mcp_servers"]["capy"] == {"command": "capy", "args": ["serve"]}
    run_shared_setup("--platform", "codex", "--undo")
    assert (workspace.project / ".codex/config.toml").read_text() == original


def test_files_setup_created_are_removed_by_undo(workspace, run_shared_setup) -> None:
    run_shared_setup("--platform", "kiro")
    assert (workspace.project / ".kiro/agents/capy.json").is_file()
    run_shared_setup("--platform", "kiro", "--undo")
    assert workspace.files() == {}


def test_a_capy_hook_the_user_moved_into_their_own_group_is_not_added_again(
    workspace, run_shared_setup
) -> None:
    mine = {
        "matcher": "Bash",
        "hooks": [
            {"type": "command", "command": "./lint.sh"},
            {"type": "command", "command": "capy hook --platform claude-code PreToolUse"},
        ],
    }
    workspace.write(".claude/settings.json", {"hooks": {"PreToolUse": [mine]}})
    run_shared_setup("--platform", "claude-code")
    settings = json.loads((workspace.project / ".claude/settings.json").read_text())
    assert settings["hooks"]["PreToolUse"] == [mine]
    run_shared_setup("--platform", "claude-code", "--undo")
    settings = json.loads((workspace.project / ".claude/settings.json").read_text())
    assert settings["hooks"]["PreToolUse"] == [{**mine, "hooks": mine["hooks"][:1]}]


def test_a_server_named_capy_of_the_users_is_left_alone(workspace, run_shared_setup) -> None:
    theirs = {"mcpServers": {"capy": {"command": "uvx", "args": ["capy", "serve"]}}}
    workspace.write(".mcp.json", theirs)
    code, out, _ = run_shared_setup("--platform", "claude-code")
    assert code == 0
    assert "already has a server named 'capy' of its own" in out
    assert json.loads((workspace.project / ".mcp.json").read_text()) == theirs
    code, out, _ = run_shared_setup("--platform", "claude-code", "--undo")
    assert "capy did not write" in out
    assert json.loads((workspace.project / ".mcp.json").read_text()) == theirs


def test_the_files_own_indentation_is_kept(workspace, run_shared_setup) -> None:
    workspace.write(".cursor/mcp.json", USER_FILES["cursor"][".cursor/mcp.json"])  # 4 spaces
    run_shared_setup("--platform", "cursor")
    text = (workspace.project / ".cursor/mcp.json").read_text()
    assert text.startswith('{\n    "mcpServers": {\n        "db"')


def _contains(whole: object, part: object) -> bool:
    """Every key and list item of `part` is in `whole` (lists may have grown)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            key in whole and _contains(whole[key], value) for key, value in part.items()
        )
    if isinstance(part, list):
        return isinstance(whole, list) and all(item in whole for item in part)
    return whole == part


def test_undo_removes_the_folders_it_emptied(workspace, run_shared_setup) -> None:
    (workspace.project / ".claude").mkdir()
    (workspace.project / ".claude" / "notes.md").write_text("mine\n")
    run_shared_setup("--platform", "opencode")
    run_shared_setup("--platform", "claude-code")
    run_shared_setup("--platform", "opencode", "--undo")
    run_shared_setup("--platform", "claude-code", "--undo")
    assert not (workspace.project / ".opencode").exists()
    assert sorted(p.name for p in workspace.project.iterdir()) == [".claude", ".git"]
    assert (workspace.project / ".claude" / "notes.md").read_text() == "mine\n"


def test_a_platform_without_an_uncommitted_project_file_gets_the_users_and_says_so(
    workspace, run_setup
) -> None:
    code, out, err = run_setup("--platform", "cursor", "--command", "capy")
    assert (code, err) == (0, "")
    assert (
        "note: Cursor has no project file for its MCP server and hooks that stays out of git, so "
        "capy used ~/.cursor/mcp.json and ~/.cursor/hooks.json (your own settings, for every "
        "project); `--shared` writes the project's files instead"
    ) in out
    assert sorted(workspace.files()) == ["home/.cursor/hooks.json", "home/.cursor/mcp.json"]
    assert run_setup("--platform", "cursor", "--undo")[0] == 0
    assert workspace.files() == {}
