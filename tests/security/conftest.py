"""Claude Code settings files written for real into the test's private project, home and
managed-settings folder (the real /etc/claude-code is never read by these tests)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def shipped_rules():
    """The shipped packs, validated once: each check would otherwise rebuild them per test."""
    from capy.rules import build_ruleset

    return build_ruleset()


class SettingsWriter:
    def __init__(self, project: Path, home: Path, managed: Path, ruleset):
        self.project, self.home, self.managed = project, home, managed
        self.ruleset = ruleset

    def path_for(self, scope: str) -> Path:
        return {
            "managed": self.managed / "managed-settings.json",
            "local": self.project / ".claude" / "settings.local.json",
            "project": self.project / ".claude" / "settings.json",
            "user": self.home / ".claude" / "settings.json",
        }[scope]

    def write(self, scope: str, text: str | None = None, **lists: list) -> Path:
        """Write `{"permissions": {deny/ask/allow}}` (or raw `text`) to a scope's file."""
        path = self.path_for(scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else json.dumps({"permissions": lists}))
        return path

    def check_command(self, command: str, **kwargs):
        from capy.security import check_command

        return check_command(command, managed_dir=self.managed, ruleset=self.ruleset, **kwargs)

    def check_tool(self, tool: str, **kwargs):
        from capy.security import check_tool

        return check_tool(tool, managed_dir=self.managed, ruleset=self.ruleset, **kwargs)


@pytest.fixture
def settings(project_dir, tmp_path, shipped_rules) -> SettingsWriter:
    home = Path(os.environ["HOME"])
    return SettingsWriter(project_dir, home, tmp_path / "managed", shipped_rules)
