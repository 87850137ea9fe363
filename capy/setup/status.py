"""Is capy registered with a platform? Read back the files `capy setup` writes (for doctor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.setup import merge, toml_text
from capy.setup.documents import SetupError, parse_json
from capy.setup.entries import capy_hooks, entry_argv, hook_commands, is_capy_server
from capy.setup.plan import plugin_commands, resolve, shown_path

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
    # What the agent will start, to try it the way the agent would: file -> server argv, and
    # file -> the shell command of one registered hook.
    server_commands: dict[str, list[str]] = field(default_factory=dict)
    hook_commands: dict[str, str] = field(default_factory=dict)

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
    found = Registration(platform, set(hook_commands(pack, platform, ["capy"])))
    for file in platform.config.mcp:
        _read_mcp(found, pack, file, project_dir, home)
    for file in platform.config.hooks:
        _read_hooks(found, pack, platform, file, project_dir, home)
    return found


def _text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")  # CRLF kept as it is
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
        if text is None or file.shape != "servers" or pack.mcp_server is None:
            return
        servers = _section(_load(file, text, shown), file.key_steps(project_dir))
    except (SetupError, OSError, UnicodeDecodeError) as error:
        found.problems.append(_problem(shown, error))
        return
    current = servers.get(pack.mcp_server.name)
    if current is None:
        return
    if is_capy_server(pack, found.platform, file, current):
        found.mcp.append(shown)
        found.server_commands[shown] = entry_argv(current, file)
    else:
        found.mcp_foreign.append(shown)


def _section(doc: Any, steps: list[str]) -> dict[str, Any]:
    node = doc
    for step in steps:
        node = node.get(step, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def _read_hooks(found, pack, platform, file: ConfigFile, project_dir: Path, home: Path) -> None:
    import shlex

    path = resolve(file.path, project_dir, home)
    shown = shown_path(path, project_dir, home)
    try:
        text = _text(path)
        if text is None:
            return
        if file.shape == "plugin-module":
            table = plugin_commands(text)
            if table is None:
                found.problems.append(f"{shown} is not capy's plugin as this capy writes it")
                return
            found.hooks[shown] = set(found.events) & set(table)
            argv = next(iter(table.values()), None)
            if isinstance(argv, list) and argv:
                found.hook_commands[shown] = shlex.join(argv)
            return
        if file.shape not in merge.HOOK_SHAPES:
            return
        doc = _load(file, text, shown)
        hooks = capy_hooks(pack, platform, file, ["capy"], mcp_hooks=False, undo=True)
        registered = merge.registered_hooks(doc, file, file.key_steps(project_dir), hooks)
    except (SetupError, OSError, UnicodeDecodeError) as error:
        found.problems.append(_problem(shown, error))
        return
    if registered:
        found.hooks[shown] = set(registered)
        commands = [command for listed in registered.values() for command in listed]
        if commands:
            found.hook_commands[shown] = commands[0]


def _problem(shown: str, error: Exception) -> str:
    if isinstance(error, SetupError):
        return str(error).split("; fix it")[0]
    return f"{shown} cannot be read ({type(error).__name__})"
