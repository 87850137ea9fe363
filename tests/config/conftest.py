"""A sandboxed home and project per test: real directories and files, no inherited CAPY_* state."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Sandbox:
    root: Path
    home: Path
    project: Path

    @property
    def user_config(self) -> Path:
        return self.home / ".config" / "capy" / "config.toml"

    @property
    def project_config(self) -> Path:
        return self.project / ".capy" / "config.toml"

    @property
    def project_file(self) -> Path:
        return self.project / ".capy.toml"

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def environ(self, **variables: str) -> dict[str, str]:
        return {"HOME": str(self.home), **variables}

    def normalise(self, text: str) -> str:
        """Replace this test's temporary paths so snapshots hold only what a user would read."""
        return text.replace(str(self.root), "<TMP>")


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    for name in list(os.environ):
        if name.startswith(("CAPY_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.chdir(project)
    return Sandbox(tmp_path.resolve(), home.resolve(), project.resolve())
