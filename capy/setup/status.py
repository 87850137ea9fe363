"""Is capy registered with a platform? Read back the files `capy setup` writes (for doctor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.setup import merge, toml_text
from capy.setup.documents import SetupError, parse_json
from capy.setup.entries import capy_hooks, hook_commands, server_entry
from capy.setup.plan import plugin_module, resolve, shown_path

if TYPE_CHECKING:
    from capy.rules.views.platforms import ConfigFile, Platform, PlatformsPack


@dataclass
class Registration:
    platform: Platform
    events: set[str]  # every native event capy registers for
    mcp: list[str] = field(default_factory=list)  # files registering capy's server
    mcp_foreign: list[str] = field(default_factory=list)  # a `capy` server of another shape
    hooks: dict[str, set[str]] = field(default_factory=dict)  # file -> native events found
    problems: list[str] = field(default_factory=list)  # files that could not be read

    @property
    def anything(self) -> bool:
        return bool(self.mcp or self.mcp_foreign or self.hooks or self.problems)

    @property
    def hooked_events(self) -> set[str]:
        return set().union(*self.hooks.values()) if self.hooks else set()

    @property
    def doubled_events(self) -> set[str]:
        """Events registered in more than one file: capy would run twice for each."""
        seen: set[str] = set()
        doubled: set[str] = set()
        for events in self.hooks.values():
            doubled |= seen & events
            seen |= events
        return doubled


def registration(
    pack: PlatformsPack, platform: Platform, project_dir: Path, home: Path
) -> Registration:
    found = Registration(platform, set(hook_commands(pack, platform)))
    for file in platform.config.mcp:
        _read_mcp(found, pack, file, project_dir, home)
    for file in platform.config.hooks:
        _read_hooks(found, pack, platform, file, project_dir, home)
    return found


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _load(file: ConfigFile, text: str, shown: str) -> dict[str, Any]:
    if file.format == "toml":
        return toml_text.parse_toml(text, shown)
    return parse_json(text, shown, jsonc=file.format == "jsonc")


def _read_mcp(found, pack, file: ConfigFile, project_dir: Path, home: Path) -> None:
    path = resolve(file.path, project_dir, home)
    shown = shown_path(path, project_dir, home)
    try:
        text = _text(path)
        if text is None or file.shape != "servers":
            return
        name, entry = server_entry(pack, file)
        servers = toml_text.servers_in(_load(file, text, shown), file.key or "")
    except (SetupError, OSError, UnicodeDecodeError) as error:
        found.problems.append(_problem(shown, error))
        return
    if servers.get(name) == entry:
        found.mcp.append(shown)
    elif name in servers:
        found.mcp_foreign.append(shown)


def _read_hooks(found, pack, platform, file: ConfigFile, project_dir: Path, home: Path) -> None:
    path = resolve(file.path, project_dir, home)
    shown = shown_path(path, project_dir, home)
    try:
        text = _text(path)
        if text is None:
            return
        if file.shape == "plugin-module":
            if text == plugin_module(pack, platform):
                found.hooks[shown] = set(found.events)
            else:
                found.problems.append(f"{shown} differs from capy's current plugin")
            return
        if file.shape not in merge.HOOK_SHAPES:
            return
        doc = _load(file, text, shown)
        hooks = capy_hooks(pack, platform, file, mcp_hooks=False, undo=True)
        events = merge.registered_events(doc, file, hooks)
    except (SetupError, OSError, UnicodeDecodeError) as error:
        found.problems.append(_problem(shown, error))
        return
    if events:
        found.hooks[shown] = events


def _problem(shown: str, error: Exception) -> str:
    if isinstance(error, SetupError):
        return str(error).split("; fix it")[0]
    return f"{shown} cannot be read ({type(error).__name__})"
