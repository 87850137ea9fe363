"""Setup never writes on a dry run, backs up before changing, and refuses files it cannot edit
safely, with one sentence naming the file and nothing written anywhere."""

from __future__ import annotations

import pytest

from capy.config.paths import data_dir


def test_dry_run_prints_the_diff_and_writes_nothing(workspace, run_shared_setup, snapshot) -> None:
    workspace.user_settings("claude-code")
    before = workspace.files()
    code, out, err = run_shared_setup("--platform", "claude-code", "--dry-run")
    assert (code, err) == (0, "")
    assert workspace.files() == before
    assert not (data_dir() / "setup-backups").exists()
    assert out == snapshot


def test_dry_run_of_undo_shows_the_removal(workspace, run_shared_setup) -> None:
    run_shared_setup("--platform", "codex")
    before = workspace.files()
    code, out, _ = run_shared_setup("--platform", "codex", "--undo", "--dry-run")
    assert code == 0
    assert "-[mcp_servers.capy]" in out
    assert '-            "command": "capy hook --platform codex PreToolUse"' in out
    assert workspace.files() == before


def test_a_backup_of_each_changed_file_is_written_first(workspace, run_shared_setup) -> None:
    workspace.user_settings("gemini-cli")
    settings = workspace.project / ".gemini/settings.json"
    original = settings.read_bytes()
    code, out, _ = run_shared_setup("--platform", "gemini-cli")
    assert code == 0
    backups = list((data_dir() / "setup-backups").rglob("settings.json"))
    assert [backup.read_bytes() for backup in backups] == [original]
    assert f"backup of .gemini/settings.json: {backups[0]}" in out
    assert settings.read_bytes() != original


@pytest.mark.parametrize(
    ("platform", "relative", "text"),
    [
        ("claude-code", ".claude/settings.json", '{"hooks": {"PreToolUse": [}'),
        ("claude-code", ".claude/settings.json", '["not", "an", "object"]'),
        ("claude-code", ".claude/settings.json", '{"hooks": {"Stop": {"command": "x"}}}'),
        ("claude-code", ".mcp.json", '{"mcpServers": ["capy"]}'),
        ("codex", ".codex/config.toml", "model = \n"),
        ("codex", ".codex/config.toml", 'mcp_servers = { docs = { command = "d" } }\n'),
        ("vscode-copilot", ".vscode/mcp.json", '{\n  // mine\n  "servers": {}\n}\n'),
    ],
    ids=[
        "bad-json",
        "not-object",
        "event-not-list",
        "servers-not-object",
        "bad-toml",
        "toml-inline-table",
        "jsonc-comments",
    ],
)
def test_a_file_capy_cannot_edit_safely_stops_everything(
    workspace, run_shared_setup, snapshot, platform, relative, text
) -> None:
    workspace.write(relative, text)
    before = workspace.files()
    code, out, err = run_shared_setup("--platform", platform)
    assert code == 2
    assert out == ""
    assert relative in err
    assert "Nothing was written" in err
    assert workspace.files() == before
    assert workspace.normalise(err) == snapshot


def test_jsonc_without_comments_is_merged(workspace, run_shared_setup) -> None:
    workspace.write(
        ".vscode/mcp.json", '{\n  "servers": {\n    "fs": {"command": "fs-mcp"},\n  },\n}\n'
    )
    assert run_shared_setup("--platform", "vscode")[0] == 0
    from capy.setup.documents import parse_json

    text = (workspace.project / ".vscode/mcp.json").read_text()
    assert text.startswith('{\n  "servers": {\n    "fs": {"command": "fs-mcp"},\n')
    servers = parse_json(text, "mcp.json", jsonc=True)["servers"]
    assert servers["capy"] == {"type": "stdio", "command": "capy", "args": ["serve"]}
    assert servers["fs"] == {"command": "fs-mcp"}


def test_unknown_platform_names_the_choices(run_shared_setup) -> None:
    code, _, err = run_shared_setup("--platform", "emacs")
    assert code == 2
    assert err.startswith("capy: unknown platform 'emacs'; choose one of: claude-code, codex")


def test_a_platform_whose_layout_the_pack_does_not_give_is_refused(workspace) -> None:
    from capy.config.paths import home_dir
    from capy.rules import load_rules
    from capy.setup import SetupError
    from capy.setup.plan import plan_setup

    pack = load_rules(workspace.project).view("platforms")
    cursor = pack.platform("cursor")
    hooks = tuple(file.model_copy(update={"shape": None}) for file in cursor.config.hooks)
    unknown = cursor.model_copy(
        update={"config": cursor.config.model_copy(update={"hooks": hooks})}
    )
    with pytest.raises(
        SetupError, match=r"does not say how Cursor's \.cursor/hooks\.json is laid out"
    ):
        plan_setup(
            pack,
            unknown,
            project_dir=workspace.project,
            home=home_dir(),
            launcher=["capy"],
            scope="project",
        )
    assert workspace.files() == {}


def test_global_scope_without_a_user_file_says_so(workspace, run_shared_setup) -> None:
    code, out, _ = run_shared_setup("--platform", "vscode", "--global")
    assert code == 0
    assert "note: VS Code Copilot has no user-scope file for its MCP server in the pack" in out
    assert list(workspace.files()) == ["home/.copilot/hooks/capy.json"]
