"""The entries capy writes into agent configuration files, built from the platforms pack.

capy's entries are recognised by their exact content (the MCP server entry) or their exact
command (a hook handler), so `capy setup --undo` removes what setup added and nothing the user
wrote, and a second `capy setup` finds them instead of adding copies.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from capy.setup.documents import SetupError

if TYPE_CHECKING:
    from capy.rules.views.platforms import ConfigFile, Platform, PlatformsPack


def server_entry(pack: PlatformsPack, file: ConfigFile) -> tuple[str, dict[str, Any]]:
    """capy's MCP server name and the entry to register under it in `file`."""
    if pack.mcp_server is None:
        raise SetupError(
            "the platforms pack names no `mcp_server` to register; restore it in your overlay "
            "or run `capy rules validate` to see what overrides it"
        )
    argv = list(pack.mcp_server.command)
    return pack.mcp_server.name, {**file.entry, **_command_fields(argv, file, "MCP server")}


def hook_commands(pack: PlatformsPack, platform: Platform) -> dict[str, str]:
    """Native event name -> the command registered for it, for every event the platform has."""
    commands = {}
    for event in platform.events:
        command = pack.hook_command_for(platform.key, event)
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
