"""Adding capy's entries to a parsed configuration document, and taking exactly them out again.

Every function changes the document in place and returns notes for the person (an entry of
theirs that capy left alone, for instance). Shapes are the platforms pack's `shape` values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capy.rules.views.platforms import read_path
from capy.setup.documents import SetupError
from capy.setup.entries import handler_command, hook_handler

if TYPE_CHECKING:
    from capy.rules.views.platforms import ConfigFile

HOOK_SHAPES = ("matcher-groups", "handlers")


def section(doc: dict[str, Any], file: ConfigFile, shown: str, *, create: bool) -> dict | None:
    """The object at the file's `key` (created when asked), or None when absent."""
    key = file.key or ""
    node: Any = doc
    for step in key.split("."):
        child = node.get(step)
        if child is None:
            if not create:
                return None
            child = node[step] = {}
        if not isinstance(child, dict):
            raise SetupError(
                f'{shown}: "{key}" is not a JSON object; fix it by hand, then run capy setup '
                "again. Nothing was written."
            )
        node = child
    return node


def prune(doc: dict[str, Any], file: ConfigFile) -> None:
    """Drop the (now empty) containers on the path to the file's `key`."""
    steps = (file.key or "").split(".")
    for depth in range(len(steps), 0, -1):
        parent = read_path(doc, ".".join(steps[: depth - 1])) if depth > 1 else doc
        if isinstance(parent, dict) and parent.get(steps[depth - 1]) in ({}, []):
            del parent[steps[depth - 1]]


def add_server(doc: dict, file: ConfigFile, shown: str, name: str, entry: dict) -> list[str]:
    servers = section(doc, file, shown, create=True)
    assert servers is not None
    current = servers.get(name)
    if current is None:
        servers[name] = entry
        return []
    if current != entry:
        return [f"{shown} already has a server named {name!r} of its own; left as it is"]
    return []


def remove_server(doc: dict, file: ConfigFile, shown: str, name: str, entry: dict) -> list[str]:
    servers = section(doc, file, shown, create=False)
    if servers is None or name not in servers:
        return []
    if servers[name] != entry:
        return [f"{shown} has a server named {name!r} that capy did not write; left as it is"]
    del servers[name]
    prune(doc, file)
    return []


def add_hooks(doc: dict, file: ConfigFile, shown: str, commands: dict[str, str]) -> list[str]:
    """Register each native event's command once; existing handlers of the user's stay."""
    hooks = section(doc, file, shown, create=True)
    assert hooks is not None
    for event, command in commands.items():
        entries = _event_list(hooks, event, shown)
        if command in _commands_in(entries, file):
            continue
        handler = hook_handler(command, file)
        entries.append({"hooks": [handler]} if file.shape == "matcher-groups" else handler)
        hooks[event] = entries
    return []


def remove_hooks(doc: dict, file: ConfigFile, shown: str, commands: set[str]) -> list[str]:
    """Take out every handler whose command is one of capy's; the user's stay as they were."""
    hooks = section(doc, file, shown, create=False)
    if hooks is None:
        return []
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept = _without(entries, file, commands)
        if kept != entries:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    prune(doc, file)
    return []


def registered_events(doc: dict, file: ConfigFile, commands: dict[str, str]) -> set[str]:
    """The native events whose command is registered in `doc` (for `capy doctor`)."""
    hooks = section(doc, file, "", create=False) if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return set()
    found = set()
    for event, command in commands.items():
        entries = hooks.get(event)
        if isinstance(entries, list) and command in _commands_in(entries, file):
            found.add(event)
    return found


def _event_list(hooks: dict, event: str, shown: str) -> list:
    entries = hooks.get(event, [])
    if not isinstance(entries, list):
        raise SetupError(
            f'{shown}: the hooks for "{event}" are not a JSON list; fix it by hand, then run '
            "capy setup again. Nothing was written."
        )
    return entries


def _commands_in(entries: list, file: ConfigFile) -> set[str]:
    if file.shape == "matcher-groups":
        handlers = [
            handler
            for group in entries
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for handler in group["hooks"]
        ]
    else:
        handlers = entries
    return {command for command in map(handler_command, handlers) if command}


def _without(entries: list, file: ConfigFile, commands: set[str]) -> list:
    if file.shape != "matcher-groups":
        return [entry for entry in entries if handler_command(entry) not in commands]
    kept = []
    for group in entries:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        remaining = [handler for handler in handlers if handler_command(handler) not in commands]
        if remaining == handlers:
            kept.append(group)
        elif remaining:
            kept.append({**group, "hooks": remaining})
    return kept
