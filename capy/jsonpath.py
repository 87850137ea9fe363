"""Dotted JSON paths (`hookSpecificOutput.additionalContext`, `workspace_roots[0]`) over plain
dicts, for the platforms pack's `input` and `output` paths: the one reader and writer that the
hook adapter, the platforms view and `capy setup` share.

Kept free of pydantic and every other heavy import, because the hook path imports it and a
hook is a fresh process on every tool call. The platforms schema checks the path grammar.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _segments(path: str) -> list[tuple[str, int | None]]:
    """`a.b[0]` -> [("a", None), ("b", 0)]; the schema already checked the grammar."""
    steps: list[tuple[str, int | None]] = []
    for part in path.split("."):
        name, _, index = part.partition("[")
        steps.append((name, int(index.rstrip("]")) if index else None))
    return steps


def read_path(payload: Any, path: str) -> Any:
    """The value at a dotted path, or None when any step is missing."""
    node = payload
    for name, index in _segments(path):
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
        if index is not None:
            if not isinstance(node, list) or index >= len(node):
                return None
            node = node[index]
    return node


def read_first(payload: Any, paths: list[str] | tuple[str, ...]) -> Any:
    """The first candidate path present in the payload, or None."""
    for path in paths:
        value = read_path(payload, path)
        if value is not None:
            return value
    return None


def write_path(target: dict[str, Any], path: str, value: Any) -> None:
    """Set a value at a dotted path, creating intermediate objects (no list indexes)."""
    steps = [name for name, _ in _segments(path)]
    node = target
    for name in steps[:-1]:
        node = node.setdefault(name, {})
    node[steps[-1]] = value
