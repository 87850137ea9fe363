"""`capy uninstall` for real: setup into a temp project and home, then every file back as it was.

Each platform gets the user's own settings first (project and home files), then `capy setup` in
all three scopes; uninstall must leave every one of those files byte for byte as the user had
it, delete the files setup created, and touch capy's data and keys only when asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.setup.conftest import PLATFORMS

# Files in the home that the user already had, in their own layout (4-space indent, key order).
HOME_FILES = {
    "~/.claude.json": '{\n    "numStartups": 7,\n    "theme": "dark"\n}\n',
    "~/.claude/settings.json": '{"model": "opus", "permissions": {"allow": ["Read"]}}\n',
    "~/.gemini/settings.json": '{\n  "theme": "GitHub"\n}\n',
    "~/.codex/config.toml": 'model = "o4"  # mine\n',
    "~/.cursor/mcp.json": '{\n\t"mcpServers": {\n\t\t"db": {"command": "db-mcp"}\n\t}\n}\n',
}


@pytest.fixture
def run_capy(capsys):
    """A capy command in-process: (exit code, stdout, stderr)."""
    from capy.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _set_up_everywhere(run_capy, platform: str) -> None:
    for scope in ((), ("--shared",), ("--global",)):
        code, _, err = run_capy("setup", "--platform", platform, *scope)
        assert code == 0, err


@pytest.mark.parametrize("platform", PLATFORMS)
def test_uninstall_puts_back_every_file_setup_changed(workspace, run_capy, platform) -> None:
    workspace.user_settings(platform)
    for relative, text in HOME_FILES.items():
        workspace.write(relative, text)
    before = workspace.files()
    _set_up_everywhere(run_capy, platform)
    assert workspace.files() != before

    code, out, err = run_capy("uninstall")
    assert code == 0, err
    assert workspace.files() == before
    assert "capy itself stays installed" in out
    code, out, _ = run_capy("uninstall")
    assert code == 0
    assert "nothing to remove" in out


def test_uninstall_takes_every_platform_out_at_once(workspace, run_capy) -> None:
    before = workspace.files()  # nothing: every file setup writes is one it creates
    for platform in PLATFORMS:
        _set_up_everywhere(run_capy, platform)
    code, out, err = run_capy("uninstall")
    assert code == 0, err
    assert workspace.files() == before
    assert "Claude Code: deleted .claude/settings.local.json" in out
    assert "OpenCode: deleted ~/.config/opencode/plugins/capy.js" in out


def test_dry_run_shows_the_diff_and_writes_nothing(workspace, run_capy) -> None:
    _set_up_everywhere(run_capy, "gemini-cli")
    after_setup = workspace.files()
    code, out, _ = run_capy("uninstall", "--dry-run", "--data", "--keys")
    assert code == 0
    assert "--- a/.gemini/settings.json" in out
    assert "would delete" in out
    assert workspace.files() == after_setup


def _make_data(run_capy, workspace) -> tuple[Path, Path]:
    source = workspace.project / "notes.txt"
    source.write_text("the migration failed on a locked table\n")
    code, _, err = run_capy("index", str(source))
    assert code == 0, err
    data = workspace.home / ".local/share/capy"
    key = workspace.home / ".config/capy/db.key"
    assert data.is_dir() and key.is_file()
    return data, key


def test_data_and_keys_go_only_when_asked(workspace, run_capy) -> None:
    data, key = _make_data(run_capy, workspace)
    run_capy("setup", "--platform", "claude-code")

    code, out, _ = run_capy("uninstall")
    assert code == 0
    assert data.is_dir() and key.is_file()
    assert f"kept {data}" in out and "--data deletes it" in out

    code, out, _ = run_capy("uninstall", "--data", "--yes")
    assert code == 0
    assert not data.exists() and key.is_file()
    assert f"deleting {data}: capy's data folder" in out
    assert f"deleted {data}: capy's data folder" in out
    assert "--keys deletes them" in out

    code, out, _ = run_capy("uninstall", "--keys", "--yes")
    assert code == 0
    assert not key.exists()
    assert f"deleted {key}: the knowledge bases' key" in out


def test_deleting_asks_first_and_refuses_without_a_terminal(workspace, run_capy) -> None:
    data, key = _make_data(run_capy, workspace)
    code, _, err = run_capy("uninstall", "--data", "--keys")  # stdin is not a terminal here
    assert code == 1
    assert "add --yes" in err and str(data) in err
    assert data.is_dir() and key.is_file()


def _in_terminal(args: list[str], answer: str, cwd: Path) -> tuple[int, str]:
    """capy with a real pseudo-terminal on stdin, answering its question."""
    main, secondary = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "capy", *args],
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            text=True,
        )
        os.write(main, answer.encode())
        out, _ = process.communicate(timeout=120)
    finally:
        os.close(main)
        os.close(secondary)
    return process.returncode, out


@pytest.mark.parametrize(("answer", "deleted"), [("y\n", True), ("\n", False)])
def test_the_question_in_a_terminal(workspace, run_capy, answer, deleted) -> None:
    data, key = _make_data(run_capy, workspace)
    code, out = _in_terminal(["uninstall", "--data", "--keys"], answer, workspace.project)
    assert "capy uninstall will delete:" in out and str(key) in out
    assert code == (0 if deleted else 1), out
    assert data.exists() is not deleted and key.exists() is not deleted
    if not deleted:
        assert "nothing was changed or deleted" in out


def test_a_data_folder_that_may_hold_other_files_is_never_deleted(workspace, run_capy) -> None:
    shared = workspace.home / "shared-stuff"
    mine = shared / "my-thesis.tex"
    mine.parent.mkdir()
    mine.write_text("\\documentclass{article}\n")
    workspace.write("~/.config/capy/config.toml", f'data_dir = "{shared}"\n')
    run_capy("setup", "--platform", "claude-code")
    registered = workspace.files()

    code, _, err = run_capy("uninstall", "--data", "--yes")
    assert code == 2
    assert f"capy will not delete the data folder {shared}" in err
    assert "not a folder named 'capy'" in err
    assert mine.is_file()
    assert workspace.files() == registered  # a refusal changes nothing at all


def test_uninstall_takes_out_mcp_hooks_too(workspace, run_capy) -> None:
    workspace.user_settings("claude-code")
    before = workspace.files()
    for scope in ((), ("--shared",)):
        code, _, err = run_capy("setup", "--mcp-hooks", *scope)
        assert code == 0, err
    code, _, err = run_capy("uninstall")
    assert code == 0, err
    assert workspace.files() == before
