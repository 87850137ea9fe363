"""Editing a JSON file in place: only what changed is rewritten, the rest stays byte-identical.

A user's settings file has its own indentation, key order, spacing, escapes and final newline;
re-serialising it whole would reformat every line of it in a diff the user did not ask for.
So the file is parsed into spans (where each value, member and item sits in the text) and the
old and new documents are compared: a removed member or item is cut out with its comma, an
added one is inserted after the last one in the container's own layout, a changed scalar is
replaced where it stands. Inserting and then removing the same entry gives the original bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from capy.setup.documents import _string_end

_WHITESPACE = " \t\r\n"
_INDENT_UNIT = re.compile(r"^[{\[][^\n]*\n([ \t]+)\S", re.MULTILINE)


class JsonLayoutError(ValueError):
    """The text is not JSON this editor can follow (comments, duplicate keys...)."""


@dataclass
class Node:
    start: int
    end: int  # exclusive
    members: list[tuple[str, Node]] = field(default_factory=list)  # objects: (key, value)
    member_starts: list[int] = field(default_factory=list)  # where each member's key begins
    items: list[Node] = field(default_factory=list)  # arrays
    kind: str = "scalar"  # object, array or scalar


def edit_json_text(text: str, old: Any, new: Any) -> str:
    """`text` (which parses to `old`) changed so that it parses to `new`, touching only the
    parts of the text whose values differ."""
    root = _Parser(text).document()
    edits: list[tuple[int, int, str]] = []
    _Differ(text, edits, _indent_unit(text)).diff(old, new, root)
    newline = "\r\n" if "\r\n" in text else "\n"  # a Windows file keeps its line endings
    # From the end backwards; at one position a cut runs before an insertion, which lands there.
    for start, end, replacement in sorted(edits, key=lambda edit: edit[:2], reverse=True):
        text = text[:start] + replacement.replace("\n", newline) + text[end:]
    return text


def _indent_unit(text: str) -> str:
    match = _INDENT_UNIT.search(text)
    return match.group(1) if match else "  "


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0

    def document(self) -> Node:
        node = self.value()
        self.skip()
        if self.index != len(self.text):
            raise JsonLayoutError("text after the top-level value")
        return node

    def skip(self) -> None:
        while self.index < len(self.text) and self.text[self.index] in _WHITESPACE:
            self.index += 1

    def value(self) -> Node:
        self.skip()
        if self.index >= len(self.text):
            raise JsonLayoutError("unexpected end")
        char = self.text[self.index]
        if char == "{":
            return self.container("}", object_=True)
        if char == "[":
            return self.container("]", object_=False)
        start = self.index
        if char == '"':
            self.index = _string_end(self.text, start)
        else:
            while self.index < len(self.text) and self.text[self.index] not in ",]}" + _WHITESPACE:
                self.index += 1
        if self.index == start:
            raise JsonLayoutError(f"unexpected {char!r}")
        return Node(start, self.index)

    def container(self, close: str, *, object_: bool) -> Node:
        node = Node(self.index, -1, kind="object" if object_ else "array")
        self.index += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.index):
                self.index += 1
                node.end = self.index
                return node
            if object_:
                key_node = self.value()
                key = json.loads(self.text[key_node.start : key_node.end])
                self.skip()
                if not self.text.startswith(":", self.index):
                    raise JsonLayoutError("missing ':'")
                self.index += 1
                node.members.append((key, self.value()))
                node.member_starts.append(key_node.start)
            else:
                node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.index):
                self.index += 1
            elif not self.text.startswith(close, self.index):
                raise JsonLayoutError("missing ',' or closing bracket")


class _Differ:
    def __init__(self, text: str, edits: list[tuple[int, int, str]], unit: str) -> None:
        self.text = text
        self.edits = edits
        self.unit = unit

    def diff(self, old: Any, new: Any, node: Node) -> None:
        if old == new and type(old) is type(new):
            return
        if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
            self.diff_object(old, new, node)
        elif isinstance(old, list) and isinstance(new, list) and node.kind == "array":
            self.diff_array(old, new, node)
        else:
            self.edits.append(
                (node.start, node.end, self.render(new, self.line_indent(node.start)))
            )

    def diff_object(self, old: dict, new: dict, node: Node) -> None:
        keys = [key for key, _ in node.members]
        if len(set(keys)) != len(keys):
            raise JsonLayoutError("duplicate keys")
        spans = [
            (start, value.end)
            for start, (_, value) in zip(node.member_starts, node.members, strict=True)
        ]
        removed = {index for index, key in enumerate(keys) if key not in new}
        for key, value in node.members:
            if key in new:
                self.diff(old[key], new[key], value)
        added = [self.member(key, value, node) for key, value in new.items() if key not in old]
        self.change_children(node, spans, removed, added)

    def diff_array(self, old: list, new: list, node: Node) -> None:
        spans = [(item.start, item.end) for item in node.items]
        if len(old) == len(new):
            for before, after, item in zip(old, new, node.items, strict=True):
                self.diff(before, after, item)
            return
        if new[: len(old)] == old:  # appended
            inline = node.items and not self.multiline(node)
            indent = self.child_indent(node)
            added = [
                _compact(value) if inline else self.render(value, indent)
                for value in new[len(old) :]
            ]
            self.change_children(node, spans, set(), added)
            return
        removed = _removed_indexes(old, new)
        if removed is None:
            self.edits.append(
                (node.start, node.end, self.render(new, self.line_indent(node.start)))
            )
            return
        self.change_children(node, spans, removed, [])

    def change_children(
        self, node: Node, spans: list[tuple[int, int]], removed: set[int], added: list[str]
    ) -> None:
        """Cut the `removed` children out with their commas; put `added` after the last one."""
        kept = [index for index in range(len(spans)) if index not in removed]
        if not kept:
            if spans and added:  # every old child goes: the new ones take their place
                self.edits.append(
                    (spans[0][0], spans[-1][1], ("," + self.joiner(node)).join(added))
                )
            elif added:
                self.edits.append((node.start + 1, node.end - 1, self.fresh_body(node, added)))
            elif spans:
                self.edits.append((node.start + 1, node.end - 1, ""))
            return
        for run in _runs(sorted(removed)):
            first, last = run[0], run[-1]
            if last + 1 < len(spans):  # a child follows: cut up to its start
                self.edits.append((spans[first][0], spans[last + 1][0], ""))
            else:  # the run ends the container: cut from the end of the child before it
                self.edits.append((spans[first - 1][1], spans[last][1], ""))
        if added:
            after = spans[kept[-1]][1]
            joined = "".join("," + self.joiner(node) + value for value in added)
            self.edits.append((after, after, joined))

    def joiner(self, node: Node) -> str:
        """What separates two children after the comma: a newline and indent, or a space."""
        if self.multiline(node):
            return "\n" + self.child_indent(node)
        return " "

    def fresh_body(self, node: Node, added: list[str]) -> str:
        """The inside of an empty container given its first children, one a line."""
        outer = self.line_indent(node.start)
        inner = outer + self.unit
        return "\n" + ",\n".join(inner + value for value in added) + "\n" + outer

    def member(self, key: str, value: Any, node: Node) -> str:
        colon = ": "
        if node.members:
            first_key_end = _string_end(self.text, node.member_starts[0])
            colon = self.text[first_key_end : node.members[0][1].start]
        indent = self.child_indent(node) if self.multiline(node) or not node.members else ""
        rendered = self.render(value, indent) if indent or not node.members else _compact(value)
        return json.dumps(key, ensure_ascii=False) + colon + rendered

    def render(self, value: Any, indent: str) -> str:
        return json.dumps(value, indent=self.unit, ensure_ascii=False).replace("\n", "\n" + indent)

    def multiline(self, node: Node) -> bool:
        children = node.member_starts or [item.start for item in node.items]
        if not children:
            return True
        return "\n" in self.text[node.start : children[0]]

    def child_indent(self, node: Node) -> str:
        children = node.member_starts or [item.start for item in node.items]
        if children and self.multiline(node):
            return self.line_indent(children[0])
        return self.line_indent(node.start) + self.unit

    def line_indent(self, position: int) -> str:
        line_start = self.text.rfind("\n", 0, position) + 1
        line = self.text[line_start:position]
        return line[: len(line) - len(line.lstrip(" \t"))]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _removed_indexes(old: list, new: list) -> set[int] | None:
    """Which items of `old` to drop so that it becomes `new`, or None when `new` is not `old`
    with items removed."""
    removed: set[int] = set()
    position = 0
    for index, item in enumerate(old):
        if position < len(new) and new[position] == item:
            position += 1
        else:
            removed.add(index)
    return removed if position == len(new) else None


def _runs(indexes: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for index in indexes:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs
