"""capy's MCP server table in a TOML file (Codex's config.toml), edited as text.

No TOML writer is installed, and re-serialising would drop the user's comments anyway. So capy
appends one `[<key>.<name>]` table it renders itself and, on undo, removes exactly that table.
Each edit is checked by parsing the result with tomllib: the document must equal the original
plus (or minus) capy's entry, or nothing is written and the person gets the lines to edit by hand.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from typing import TYPE_CHECKING, Any

from capy.setup.documents import SetupError

if TYPE_CHECKING:
    from collections.abc import Callable

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def parse_toml(text: str, shown: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SetupError(
            f"{shown} is not valid TOML ({error}); fix it or move it aside, then run capy setup "
            "again. Nothing was written."
        ) from None


def table_text(key: str, name: str, entry: dict[str, Any]) -> str:
    """The table capy appends: `[mcp_servers.capy]` with one line per field."""
    header = ".".join(_key(part) for part in [*key.split("."), name])
    lines = [f"[{header}]"] + [f"{_key(field)} = {_value(value)}" for field, value in entry.items()]
    return "\n".join(lines) + "\n"


def servers_in(doc: dict[str, Any], key: str) -> dict[str, Any]:
    node: Any = doc
    for step in key.split("."):
        node = node.get(step, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def add_table(
    text: str, shown: str, key: str, name: str, entry: dict, ours: Callable[[Any], bool]
) -> tuple[str, list[str]]:
    doc = parse_toml(text, shown)
    current = servers_in(doc, key).get(name)
    if current == entry:
        return text, []
    if current is not None and ours(current):  # capy's, from another install: replace it
        text = remove_table(text, shown, key, name, ours)[0]
        doc = parse_toml(text, shown)
    elif current is not None:
        return text, [f"{shown} already has a server named {name!r} of its own; left as it is"]
    block = table_text(key, name, entry)
    separator = (
        "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    )
    new_text = text + separator + block
    expected = copy.deepcopy(doc)
    _insert(expected, key, name, entry)
    _check(new_text, (expected,), shown, f"add these lines by hand:\n{block.rstrip()}")
    return new_text, []


def remove_table(
    text: str, shown: str, key: str, name: str, ours: Callable[[Any], bool]
) -> tuple[str, list[str]]:
    doc = parse_toml(text, shown)
    current = servers_in(doc, key).get(name)
    if current is None:
        return text, []
    if not ours(current):
        return text, [f"{shown} has a server named {name!r} that capy did not write; left as it is"]
    header = table_text(key, name, {}).splitlines()[0]
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        raise SetupError(
            f"{shown} registers capy's server in a form capy did not write; remove "
            f"{key}.{name} by hand. Nothing was written."
        )
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines)
    )
    while start > 0 and not lines[start - 1].strip():
        start -= 1  # the blank line setup put before the table goes with it
    new_text = "".join(lines[:start] + lines[end:])
    kept = copy.deepcopy(doc)
    del servers_in(kept, key)[name]
    pruned = copy.deepcopy(kept)
    _prune(pruned, key)
    # An empty `[mcp_servers]` header of the user's own stays, so either reading is right.
    _check(new_text, (kept, pruned), shown, f"remove the [{header[1:-1]}] table by hand.")
    return new_text, []


def _separator(text: str) -> str:
    """One blank line between the user's last line and capy's table."""
    if not text or text.endswith("\n\n"):
        return ""
    return "\n" if text.endswith("\n") else "\n\n"


def _check(new_text: str, expected: tuple[dict, ...], shown: str, by_hand: str) -> None:
    try:
        ok = tomllib.loads(new_text) in expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise SetupError(
            f"{shown} is laid out in a way capy cannot edit safely (an inline table, say); "
            f"{by_hand}\nNothing was written."
        )


def _insert(doc: dict, key: str, name: str, entry: dict) -> None:
    node = doc
    for step in key.split("."):
        node = node.setdefault(step, {})
    node[name] = entry


def _prune(doc: dict, key: str) -> None:
    # Removing the last [mcp_servers.x] table leaves no mcp_servers table in the text either.
    steps = key.split(".")
    for depth in range(len(steps), 0, -1):
        parent = servers_in(doc, ".".join(steps[: depth - 1])) if depth > 1 else doc
        if parent.get(steps[depth - 1]) == {}:
            del parent[steps[depth - 1]]


def _key(part: str) -> str:
    return part if _BARE_KEY.match(part) else json.dumps(part, ensure_ascii=False)


def _value(value: Any) -> str:
    # Strings and lists of strings, booleans and integers: JSON spells them as TOML does.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)
