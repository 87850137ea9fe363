"""Adding capy's entries to a parsed configuration document, and taking exactly them out again.

Every function changes the document in place and returns notes for the person (an entry of
theirs that capy left alone, for instance). Shapes are the platforms pack's `shape` values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capy.setup.documents import SetupError
from capy.setup.entries import handler_command

if TYPE_CHECKING:
    from collections.abc import Callable

    from capy.rules.views.platforms import ConfigFile
    from capy.setup.entries import CapyHooks

HOOK_SHAPES = ("matcher-groups", "handlers")


def section(doc: dict[str, Any], steps: list[str], shown: str, *, create: bool) -> dict | None:
    """The object at the file's key `steps` (created when asked), or None when absent."""
    key = ".".join(steps)
    node: Any = doc
    for step in steps:
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


def prune(doc: dict[str, Any], steps: list[str]) -> None:
    """Drop the (now empty) containers on the path to the file's key `steps`."""
    for depth in range(len(steps), 0, -1):
        parent: Any = doc
        for step in steps[: depth - 1]:
            parent = parent.get(step) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and parent.get(steps[depth - 1]) in ({}, []):
            del parent[steps[depth - 1]]


def add_server(
    doc: dict, steps: list[str], shown: str, name: str, entry: dict, ours: Callable[[Any], bool]
) -> list[str]:
    """capy's server under `name`; one capy wrote earlier (another program, another mode) is
    brought up to date, one of the user's own is left alone."""
    servers = section(doc, steps, shown, create=True)
    assert servers is not None
    current = servers.get(name)
    if current is None or (current != entry and ours(current)):
        servers[name] = entry
        return []
    if current != entry:
        return [f"{shown} already has a server named {name!r} of its own; left as it is"]
    return []


def remove_server(
    doc: dict, steps: list[str], shown: str, name: str, ours: Callable[[Any], bool]
) -> list[str]:
    servers = section(doc, steps, shown, create=False)
    if servers is None or name not in servers:
        return []
    if not ours(servers[name]):
        return [f"{shown} has a server named {name!r} that capy did not write; left as it is"]
    del servers[name]
    prune(doc, steps)
    return []


def sync_hooks(
    doc: dict, file: ConfigFile, steps: list[str], shown: str, hooks: CapyHooks
) -> list[str]:
    """Make capy's handlers in the file exactly `hooks.wanted`; the user's stay as they were.

    capy's handlers that are no longer wanted (the other mode's, or all of them for undo) go
    first, then each wanted handler that is missing is appended, so a second run changes nothing.
    """
    section_ = section(doc, steps, shown, create=bool(hooks.wanted))
    if section_ is None:
        return []
    for event in list(section_):
        entries = section_[event]
        if not isinstance(entries, list):
            continue
        keep = {None} | {hooks.key(handler) for _, handler in hooks.wanted.get(event, ())}
        kept = _without(entries, file, lambda handler, keep=keep: hooks.key(handler) not in keep)
        if kept != entries:
            if kept:
                section_[event] = kept
            else:
                del section_[event]
    for event, wanted in hooks.wanted.items():
        entries = _event_list(section_, event, shown)
        present = {hooks.key(handler) for handler in _handlers_in(entries, file)}
        for matcher, handler in wanted:
            if hooks.key(handler) not in present:
                entries.append(_group(matcher, handler) if _grouped(file) else handler)
        section_[event] = entries
    prune(doc, steps)
    return []


def registered_hooks(
    doc: dict, file: ConfigFile, steps: list[str], hooks: CapyHooks
) -> dict[str, list[str]]:
    """Native event -> the commands of capy's handlers for it in `doc` (for `capy doctor`); a
    tool-call handler counts with no command."""
    section_ = section(doc, steps, "", create=False) if isinstance(doc, dict) else None
    if not isinstance(section_, dict):
        return {}
    found: dict[str, list[str]] = {}
    for event in hooks.commands:
        entries = section_.get(event)
        if not isinstance(entries, list):
            continue
        for handler in _handlers_in(entries, file):
            if hooks.registers(event, handler):
                command = handler_command(handler)
                found.setdefault(event, []).extend([command] if command else [])
    return found


def _grouped(file: ConfigFile) -> bool:
    return file.shape == "matcher-groups"


def _group(matcher: str | None, handler: dict) -> dict:
    return {"hooks": [handler]} if matcher is None else {"matcher": matcher, "hooks": [handler]}


def _event_list(hooks: dict, event: str, shown: str) -> list:
    entries = hooks.get(event, [])
    if not isinstance(entries, list):
        raise SetupError(
            f'{shown}: the hooks for "{event}" are not a JSON list; fix it by hand, then run '
            "capy setup again. Nothing was written."
        )
    return entries


def _handlers_in(entries: list, file: ConfigFile) -> list:
    if not _grouped(file):
        return entries
    return [
        handler
        for group in entries
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
    ]


def _without(entries: list, file: ConfigFile, drop: Callable[[Any], bool]) -> list:
    if not _grouped(file):
        return [entry for entry in entries if not drop(entry)]
    kept = []
    for group in entries:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        remaining = [handler for handler in handlers if not drop(handler)]
        if remaining == handlers:
            kept.append(group)
        elif remaining:
            kept.append({**group, "hooks": remaining})
    return kept
