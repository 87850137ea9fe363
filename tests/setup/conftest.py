"""Real project and home folders with the user's own agent settings already in place."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

PLATFORMS = ("claude-code", "codex", "gemini-cli", "cursor", "vscode-copilot", "kiro", "opencode")

# What a user already had before running capy setup: their own hooks, servers and other keys.
USER_FILES = {
    "claude-code": {
        ".mcp.json": {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}},
        ".claude/settings.json": {
            "permissions": {"deny": ["Bash(rm -rf:*)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
                ],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
            },
        },
    },
    "codex": {
        ".codex/hooks.json": {
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}]}
        },
    },
    "gemini-cli": {
        ".gemini/settings.json": {
            "theme": "GitHub",
            "mcpServers": {"docs": {"command": "docs-mcp"}},
            "hooks": {
                "BeforeTool": [
                    {
                        "matcher": "write_file",
                        "hooks": [{"type": "command", "command": "./check.sh", "name": "check"}],
                    }
                ]
            },
        },
    },
    "cursor": {
        ".cursor/hooks.json": {
            "version": 1,
            "hooks": {"afterFileEdit": [{"command": "./format.sh"}]},
        },
        ".cursor/mcp.json": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}}},
    },
    "vscode-copilot": {
        ".vscode/mcp.json": {"servers": {"fs": {"type": "stdio", "command": "fs-mcp"}}},
    },
    "kiro": {
        ".kiro/settings/mcp.json": {"mcpServers": {"aws": {"command": "aws-mcp"}}},
    },
    "opencode": {
        "opencode.json": {"$schema": "https://opencode.ai/config.json", "model": "x/y"},
    },
}
CODEX_TOML = '# my Codex settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'


@dataclass
class Workspace:
    project: Path
    home: Path

    def write(self, relative: str, content: str | dict) -> Path:
        path = self.home / relative[2:] if relative.startswith("~/") else self.project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=4) + "\n"
        path.write_text(text, encoding="utf-8")
        return path

    def files(self) -> dict[str, bytes]:
        """Every file under the project and the home, except capy's own data and backups."""
        found = {}
        for label, root in (("project", self.project), ("home", self.home)):
            for path in sorted(root.rglob("*")):
                relative = path.relative_to(root).as_posix()
                if path.is_file() and not relative.startswith(
                    (".local/share/capy", ".config/capy")
                ):
                    found[f"{label}/{relative}"] = path.read_bytes()
        return found

    def user_settings(self, platform: str) -> None:
        for relative, content in USER_FILES[platform].items():
            self.write(relative, content)
        if platform == "codex":
            self.write(".codex/config.toml", CODEX_TOML)

    def normalise(self, text: str) -> str:
        return text.replace(str(self.home), "<HOME>").replace(str(self.project), "<PROJECT>")


@pytest.fixture
def workspace(project_dir: Path) -> Workspace:
    (project_dir / ".git").mkdir()
    return Workspace(project_dir.resolve(), Path(os.environ["HOME"]).resolve())


@pytest.fixture
def run_setup(capsys):
    """`capy setup ...` in-process: (exit code, stdout, stderr)."""
    from capy.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["setup", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def run_shared_setup(run_setup):
    """`capy setup` into the project's committed files (`--shared`, or `--global` when given),
    registering the program as a plain `capy` so diffs and snapshots read the same anywhere."""

    def run(*args: str) -> tuple[int, str, str]:
        scope = () if "--global" in args else ("--shared",)
        return run_setup(*args, *scope, "--command", "capy")

    return run
