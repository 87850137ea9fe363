"""Find and read Claude Code's settings files for their `permissions` lists.

Where the files are is data: the claude-code entry's `config.permissions` in the platforms pack.
Claude Code's documented precedence, highest first: enterprise managed settings (plus the
`managed-settings.d/` drop-ins beside them), `.claude/settings.local.json`, `.claude/settings.json`
in the project, then `~/.claude/settings.json`; the pack lists them in that order. Deny beats ask
beats allow across all of them, so precedence only orders which file is reported when several
rules decide alike.

A file that cannot be read (invalid JSON, not an object, `permissions` of the wrong shape) is
reported with one warning line naming it; the caller decides how to stay safe without its rules.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.rules.views.platforms import PermissionFiles

PERMISSIONS_PLATFORM = "claude-code"  # whose settings files hold the permission rules capy reads
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


def permission_locations(project_dir: Path | None = None, ruleset: Any = None) -> PermissionFiles:
    """The settings locations from the platforms pack in force for the project (`ruleset`
    when the caller holds it already: the same packs its built-in policies come from).

    Broken overlays must not cost the user their deny rules: capy then falls back to the
    shipped pack's locations rather than reading no settings at all.
    """
    from capy.config import ConfigError
    from capy.rules import RulesError, build_ruleset, load_rules

    try:
        view = (ruleset if ruleset is not None else load_rules(project_dir)).view("platforms")
        locations = view.platform(PERMISSIONS_PLATFORM).config.permissions
    except (RulesError, ConfigError, KeyError):
        locations = None
    if locations is None:  # an overlay that drops them gets the shipped locations
        shipped = build_ruleset().view("platforms").platform(PERMISSIONS_PLATFORM)
        locations = shipped.config.permissions
    assert locations is not None, "the shipped platforms pack lists Claude Code's settings"
    return locations


def default_managed_dir(locations: PermissionFiles | None = None) -> Path:
    locations = locations or permission_locations()
    dirs = locations.managed_dirs
    return Path(dirs.get(sys.platform, dirs["linux"]))


def settings_files(
    project_dir: Path, home: Path, managed_dir: Path | None = None, ruleset: Any = None
) -> list[SettingsFile]:
    """Every settings file Claude Code would read, highest precedence first (present or not)."""
    return settings_places(project_dir, home, managed_dir, ruleset)[0]


def settings_places(
    project_dir: Path, home: Path, managed_dir: Path | None = None, ruleset: Any = None
) -> tuple[list[SettingsFile], Path | None]:
    """`settings_files`, and the drop-in folder whose listing added some of them (if the pack
    names one): a file put there or removed from it changes the list."""
    locations = permission_locations(project_dir, ruleset)
    managed = default_managed_dir(locations) if managed_dir is None else Path(managed_dir)
    files = [SettingsFile(managed / locations.managed_file, Scope.MANAGED, managed)]
    drop_ins = managed / locations.managed_drop_ins if locations.managed_drop_ins else None
    if drop_ins is not None and drop_ins.is_dir():
        files.extend(
            SettingsFile(path, Scope.MANAGED, managed) for path in sorted(drop_ins.glob("*.json"))
        )
    for entry in locations.files:
        path, root = _resolve(entry.path, project_dir, home)
        files.append(SettingsFile(path, Scope(entry.scope), root))
    return files, drop_ins


def _resolve(path: str, project_dir: Path, home: Path) -> tuple[Path, Path]:
    """A pack path and what `/path` rules in that file are relative to (project or home)."""
    if path.startswith("~/"):
        return home / path.removeprefix("~/"), home
    return project_dir / path, project_dir


def read_settings(file: SettingsFile) -> LoadedSettings | None:
    """The file's permission lists; None when it does not exist."""
    from capy.userfiles import SMALL_FILE_BYTES, read_user_file

    if not file.path.exists():
        return None
    try:
        # A repository can ship a FIFO or a huge file under that name: bounded, never blocking.
        raw = read_user_file(file.path, limit=SMALL_FILE_BYTES, purpose="read").head
        text = raw.decode("utf-8")
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
