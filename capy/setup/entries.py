"""The entries capy writes into agent configuration files, built from the platforms pack.

capy's entries are recognised by their exact content (the MCP server entry) or their exact
command (a hook handler), so `capy setup --undo` removes what setup added and nothing the user
wrote, and a second `capy setup` finds them instead of adding copies.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capy.setup.documents import SetupError
from capy.setup.launcher import hook_launcher, is_capy_program

if TYPE_CHECKING:
    from collections.abc import Hashable

    from capy.rules.views.platforms import (
        ConfigFile,
        McpHooks,
        McpServer,
        Platform,
        PlatformsPack,
    )


LAUNCHER = "{capy}"  # where the pack's commands put the program that starts capy


def server_entry(
    pack: PlatformsPack,
    platform: Platform,
    file: ConfigFile,
    launcher: list[str],
    *,
    mcp_hooks: bool,
) -> tuple[str, dict[str, Any]]:
    """capy's MCP server name and the entry to register under it in `file`."""
    server = _mcp_server(pack)
    argv = _with_launcher(server.command, launcher)
    spec = platform.config.mcp_hooks
    if mcp_hooks and spec is not None:
        argv += spec.server_args
    return server.name, {**file.entry, **_command_fields(argv, file, "MCP server")}


def is_capy_server(pack: PlatformsPack, platform: Platform, file: ConfigFile, entry: Any) -> bool:
    """Whether a server entry is one capy setup wrote, whichever program and mode it names."""
    argv = entry_argv(entry, file)
    if argv is None:
        return False
    tail = [part for part in _mcp_server(pack).command if part != LAUNCHER]
    spec = platform.config.mcp_hooks
    endings = [tail, tail + list(spec.server_args)] if spec else [tail]
    return is_capy_program(argv) and any(
        len(argv) > len(end) and argv[-len(end) :] == end for end in endings
    )


def entry_argv(entry: Any, file: ConfigFile) -> list[str] | None:
    """The argv of a server entry as `file` spells it, or None when it is not one."""
    if not isinstance(entry, dict):
        return None
    command = entry.get("command")
    if file.command_style == "split" and isinstance(command, str):
        args = entry.get("args", [])
        return [command, *args] if _strings(args) else None
    if file.command_style == "list" and _strings(command) and command:
        return list(command)
    if file.command_style == "string" and isinstance(command, str):
        return _split(command)
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(part, str) for part in value)


def _split(command: str) -> list[str] | None:
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _with_launcher(argv: tuple[str, ...], launcher: list[str]) -> list[str]:
    words: list[str] = []
    for part in argv:
        words += launcher if part == LAUNCHER else [part]
    return words


def _mcp_server(pack: PlatformsPack) -> McpServer:
    if pack.mcp_server is None:
        raise SetupError(
            "the platforms pack names no `mcp_server` to register; restore it in your overlay "
            "or run `capy rules validate` to see what overrides it"
        )
    return pack.mcp_server


@dataclass(frozen=True)
class CapyHooks:
    """The hook handlers capy wants in one file, and how to recognise any handler of its own.

    `wanted` maps a native event to (matcher, handler) pairs; a matcher of None matches every
    tool. capy's handlers are its hook commands and calls to its own MCP tool, whatever the
    mode that wrote them, so switching modes or undoing finds the other mode's entries too.
    A hook command is capy's when it ends in capy's own words (`hook --platform P EVENT`),
    whatever program starts it, so a setup run from another install replaces the old entry.
    """

    wanted: dict[str, list[tuple[str | None, dict[str, Any]]]]
    commands: dict[str, str]  # native event -> capy's command for it
    mcp_tool: tuple[str, str] | None = None  # (server, tool) of capy's tool-call handlers
    _endings: dict[tuple[str, ...], str] = field(init=False)  # command ending -> native event

    def __post_init__(self) -> None:
        endings = {_ending(command): event for event, command in self.commands.items()}
        object.__setattr__(self, "_endings", endings)

    def event_of(self, handler: Any) -> str | None:
        """The native event a capy hook command handles, or None for anything else."""
        command = handler_command(handler)
        words = _split(command) if command is not None else None
        if not words:
            return None
        for ending, event in self._endings.items():
            if len(words) > len(ending) and tuple(words[-len(ending) :]) == ending:
                return event
        return None

    def key(self, handler: Any) -> Hashable | None:
        """What identifies one of capy's handlers (None: the user's). A handler keeps its key
        when the user adds fields (a timeout, a status message), so setup leaves it alone."""
        command = handler_command(handler)
        if command is not None:
            return ("command", command) if self.event_of(handler) is not None else None
        if self.mcp_tool is None or not isinstance(handler, dict):
            return None
        if (handler.get("server"), handler.get("tool")) != self.mcp_tool:
            return None
        return ("mcp_tool", json.dumps(handler.get("input"), sort_keys=True))

    def registers(self, event: str, handler: Any) -> bool:
        """Whether `handler` runs capy for `event` (for `capy doctor`)."""
        key = self.key(handler)
        return key is not None and (key[0] == "mcp_tool" or self.event_of(handler) == event)


def _ending(command: str) -> tuple[str, ...]:
    """The words of a hook command after its program: `hook --platform P EVENT`. The program
    may be several words (the interpreter running capy's lean start with -c), so they start
    at `hook`."""
    words = tuple(shlex.split(command))
    return words[words.index("hook") :] if "hook" in words else words[1:]


def capy_hooks(
    pack: PlatformsPack,
    platform: Platform,
    file: ConfigFile,
    launcher: list[str],
    *,
    mcp_hooks: bool,
    undo: bool,
) -> CapyHooks:
    """What capy setup writes into a hooks file: nothing for undo, else one handler per event,
    with the `mcp_hooks` events as one tool call per matcher when asked."""
    commands = hook_commands(pack, platform, launcher)
    spec = platform.config.mcp_hooks
    mcp_tool = (pack.mcp_server.name, spec.tool) if spec and pack.mcp_server else None
    if undo:
        return CapyHooks({}, commands, mcp_tool)
    wanted: dict[str, list[tuple[str | None, dict[str, Any]]]] = {
        event: [(None, hook_handler(command, file))] for event, command in commands.items()
    }
    if mcp_hooks:
        if spec is None:
            raise no_mcp_hooks(platform)
        server = _mcp_server(pack).name
        for canonical in spec.events:
            native = platform.native_event(canonical)
            if native is None:
                continue
            wanted[native] = [
                (group.matcher, _tool_call(spec, server, native, group.input))
                for group in spec.matchers
            ]
    return CapyHooks(wanted, commands, mcp_tool)


def _tool_call(spec: McpHooks, server: str, event: str, matched: dict[str, str]) -> dict:
    """One handler calling capy's hook tool; the event is a literal, the rest `${...}` paths."""
    arguments = {"event": event, **spec.input, **matched}
    return {**spec.entry, "server": server, "tool": spec.tool, "input": arguments}


def no_mcp_hooks(platform: Platform) -> SetupError:
    return SetupError(
        f"{platform.name} has no hook type that calls an MCP tool; run capy setup without "
        "--mcp-hooks. Nothing was written."
    )


def hook_commands(pack: PlatformsPack, platform: Platform, launcher: list[str]) -> dict[str, str]:
    """Native event name -> the command registered for it, for every event the platform has."""
    commands = {}
    program = shlex.join(hook_launcher(launcher))
    for event in platform.events:
        command = pack.hook_command_for(platform.key, event, capy=program)
        if command is not None:
            commands[platform.events[event]] = command
    return commands


def hook_handler(command: str, file: ConfigFile) -> dict[str, Any]:
    return {**file.entry, **_command_fields(shlex.split(command), file, "hook")}


def handler_command(handler: Any) -> str | None:
    """The command of a hook handler as the user's file spells it (string or argv list)."""
    if not isinstance(handler, dict):
        return None
    command = handler.get("command")
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        return shlex.join(command)
    return command if isinstance(command, str) else None


def _command_fields(argv: list[str], file: ConfigFile, what: str) -> dict[str, Any]:
    style = file.command_style
    if style == "string":
        return {"command": shlex.join(argv)}
    if style == "split":
        return {"command": argv[0], "args": argv[1:]}
    if style == "list":
        return {"command": argv}
    raise SetupError(
        f"the platforms pack does not say how a {what} command is written in {file.path} "
        "(`command_style` is missing); capy cannot register there"
    )
