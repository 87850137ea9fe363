"""Find and read Claude Code's settings files for their `permissions` lists.

Claude Code's documented precedence, highest first: enterprise managed settings (plus the
`managed-settings.d/` drop-ins beside them), `.claude/settings.local.json`, `.claude/settings.json`
in the project, then `~/.claude/settings.json`. Deny beats ask beats allow across all of them,
so precedence only orders which file is reported when several rules decide alike.

A file that cannot be read (invalid JSON, not an object, `permissions` of the wrong shape) is
reported with one warning line naming it; the caller decides how to stay safe without its rules.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

# Where Claude Code looks for managed settings on each OS (its settings documentation).
_MANAGED_DIRS = {
    "darwin": Path("/Library/Application Support/ClaudeCode"),
    "win32": Path("C:/Program Files/ClaudeCode"),
}
_LINUX_MANAGED_DIR = Path("/etc/claude-code")
MANAGED_FILE = "managed-settings.json"
MANAGED_DROP_INS = "managed-settings.d"
DECISION_LISTS = ("deny", "ask", "allow")


class Scope(StrEnum):
    MANAGED = "managed"
    LOCAL = "local"
    PROJECT = "project"
    USER = "user"


@dataclass(frozen=True)
class SettingsFile:
    path: Path
    scope: Scope
    root: Path  # what a `/path` rule in this file is relative to

    def shown(self, project_dir: Path | None = None, home: Path | None = None) -> str:
        """The path as a person recognises it: project-relative, `~/...`, else absolute."""
        for base, prefix in ((project_dir, ""), (home, "~/")):
            if base is not None and self.path.is_relative_to(base):
                return prefix + self.path.relative_to(base).as_posix()
        return str(self.path)


@dataclass(frozen=True)
class LoadedSettings:
    file: SettingsFile
    rules: dict[str, tuple[Any, ...]]  # "deny" | "ask" | "allow" -> entries as written
    problem: str | None = None  # why the file could not be used, if it could not


def default_managed_dir() -> Path:
    return _MANAGED_DIRS.get(sys.platform, _LINUX_MANAGED_DIR)


def settings_files(
    project_dir: Path, home: Path, managed_dir: Path | None = None
) -> list[SettingsFile]:
    """Every settings file Claude Code would read, highest precedence first (present or not)."""
    managed = default_managed_dir() if managed_dir is None else Path(managed_dir)
    files = [SettingsFile(managed / MANAGED_FILE, Scope.MANAGED, managed)]
    drop_ins = managed / MANAGED_DROP_INS
    if drop_ins.is_dir():
        files.extend(
            SettingsFile(path, Scope.MANAGED, managed) for path in sorted(drop_ins.glob("*.json"))
        )
    files.append(
        SettingsFile(project_dir / ".claude" / "settings.local.json", Scope.LOCAL, project_dir)
    )
    files.append(
        SettingsFile(project_dir / ".claude" / "settings.json", Scope.PROJECT, project_dir)
    )
    files.append(SettingsFile(home / ".claude" / "settings.json", Scope.USER, home))
    return files


def read_settings(file: SettingsFile) -> LoadedSettings | None:
    """The file's permission lists; None when it does not exist."""
    try:
        text = file.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        return _broken(file, f"cannot be read ({type(error).__name__})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return _broken(file, f"is not valid JSON (line {error.lineno}, column {error.colno})")
    if not isinstance(data, dict):
        return _broken(file, "is not a JSON object")
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        return _broken(file, '"permissions" is not an object')
    rules: dict[str, tuple[Any, ...]] = {}
    for name in DECISION_LISTS:
        entries = permissions.get(name, [])
        if not isinstance(entries, list):
            return _broken(file, f'"permissions.{name}" is not a list')
        rules[name] = tuple(entries)
    return LoadedSettings(file, rules)


def _broken(file: SettingsFile, problem: str) -> LoadedSettings:
    return LoadedSettings(file, {name: () for name in DECISION_LISTS}, problem)
