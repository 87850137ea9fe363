"""A fast path for strict YAML loading: libyaml's C parser, answering only when it is sure.

The strict loader (capy.rules.yamlload) runs ruamel.yaml's pure-Python round-trip parser, which
reads about 100 KB a second; a fresh capy home parses every shipped pack (half a megabyte)
before its first command. libyaml (through PyYAML's C composer) builds the same node tree, with
the same line and column marks, ten to twenty times faster.

This path must give exactly what the strict loader gives, or nothing. So it keeps YAML 1.2's
reading of plain scalars (ruamel's own resolver; PyYAML's would read `on` or `yes` as booleans),
and it returns None, sending the text to the strict loader, for anything it does not handle
itself: a parse error, a directive, an explicit tag, an anchor or alias, a merge key, a
duplicate or non-string key, an empty value, a date, a number in any but the plainest spelling,
a tab outside a quoted or block scalar, line breaks other than \n, nesting or size past the
strict loader's bounds. The strict loader then reports the problem with its own message and
position, or reads the rare valid spelling the same way it always has.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache
from typing import Any

from capy.rules.positions import Loaded, PathKey, Position

# Set by this module's resolver, so the walk can tell an untagged scalar, plain or quoted, from
# one that carries an explicit tag (which stays with the strict loader).
_PLAIN = "capy:plain"
_QUOTED = "capy:quoted"
_COLLECTION = "capy:collection"
_OTHER = "capy:other"

_DIRECTIVE = re.compile(r"^%", re.MULTILINE)
# Line breaks other than \n: the lines and columns this path reads are counted on \n alone.
_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")
# A block scalar's header: its indicators, then nothing but spaces and a comment to the line's end.
_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*(?: +(?:#.*)?)?")
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")

_YAML12 = "tag:yaml.org,2002:"


class _Unsure(Exception):
    """The strict loader must read this text."""


@cache
def _loader_class() -> Any:
    """A PyYAML C loader whose resolver only marks nodes, or None without libyaml."""
    try:
        from yaml.cyaml import CParser as parser
        from yaml.nodes import ScalarNode
    except ImportError:  # PyYAML missing, or built without libyaml
        return None

    class _MarkingLoader(parser):  # type: ignore[misc, valid-type]
        # The C composer calls these three, as a PyYAML Resolver would provide them.
        def descend_resolver(self, parent: Any, index: Any) -> None:
            return None

        def ascend_resolver(self) -> None:
            return None

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            if kind is not ScalarNode:
                return _COLLECTION
            if implicit[0]:
                return _PLAIN
            return _QUOTED if implicit[1] else _OTHER

    return _MarkingLoader


@cache
def _resolver() -> tuple[Any, Any, frozenset[str]]:
    """ruamel's YAML 1.2 resolver, the one the strict loader reads plain scalars with, and the
    first characters it has any rule for (a scalar starting otherwise is a string)."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    resolver = VersionedResolver(version=(1, 2))
    table = resolver.versioned_resolver
    if table.get(None):  # a rule for any first character: ask the resolver every time
        return resolver, ScalarNode, frozenset()
    return resolver, ScalarNode, frozenset(key for key in table if key)


def fast_load(text: str, max_depth: int, max_nodes: int) -> Loaded | None:
    """The strict loader's result for `text`, or None when only the strict loader may say."""
    loader_class = _loader_class()
    if loader_class is None or _DIRECTIVE.search(text) or _OTHER_BREAKS.search(text):
        return None
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
    except Exception:  # any complaint at all goes to the strict loader, which words it
        return None
    finally:
        loader.dispose()
    if root is None:
        return None
    walk = _Walk(text.split("\n"), max_depth, max_nodes)
    try:
        data = walk.node(root, (), 0)
        if "\t" in text:
            walk.check_tabs()
    except _Unsure:
        return None
    return Loaded(data, walk.positions, walk.key_positions)


class _Walk:
    def __init__(self, lines: list[str], max_depth: int, max_nodes: int) -> None:
        self.lines = lines
        self.positions: dict[PathKey, Position] = {(): Position(1, 1)}
        self.key_positions: dict[PathKey, Position] = {}
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.count = 0
        # Where each quoted or block scalar starts and ends, as (line, column), in order.
        self.quoted_spans: list[tuple[tuple[int, int], tuple[int, int]]] = []

    def node(self, node: Any, path: PathKey, depth: int) -> Any:
        self.count += 1
        if self.count > self.max_nodes:
            raise _Unsure
        mark = node.start_mark
        if mark.line >= len(self.lines):
            raise _Unsure  # a mark past the last line: the two parsers count differently here
        lead = self.lines[mark.line][mark.column : mark.column + 1]
        # A node starts at its anchor or tag, if it has one. libyaml and ruamel end anchor
        # names at different characters, and aliases expand: both stay with the strict loader.
        if lead in ("&", "!", "*"):
            raise _Unsure
        if node.tag == _PLAIN:
            # An empty value (`key:` and nothing) is placed where the scalar would start by
            # libyaml, at the next token by ruamel: only the strict loader places it as before.
            if not node.value:
                raise _Unsure
            return _plain_scalar(node.value)
        if node.tag == _QUOTED:
            if node.style in ("|", ">"):
                # At the root, a block scalar's lines may start in column 0, where libyaml
                # reads a `#` line as a comment and the strict loader as text.
                if depth == 0:
                    raise _Unsure
                self._check_block_header(mark)
            end = node.end_mark
            self.quoted_spans.append(((mark.line, mark.column), (end.line, end.column)))
            return node.value
        if node.tag != _COLLECTION or depth >= self.max_depth:
            raise _Unsure
        if node.id == "mapping":
            return self.mapping(node, path, depth)
        return self.sequence(node, path, depth)

    def mapping(self, node: Any, path: PathKey, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.node(key_node, path, depth + 1)
            if not isinstance(key, str) or key in out:
                raise _Unsure
            child = (*path, key)
            self.key_positions[child] = _position(key_node)
            self.positions[child] = _position(value_node)
            out[key] = self.node(value_node, child, depth + 1)
        return out

    def sequence(self, node: Any, path: PathKey, depth: int) -> list[Any]:
        items = []
        for index, item in enumerate(node.value):
            child = (*path, index)
            self.positions[child] = _position(item)
            items.append(self.node(item, child, depth + 1))
        return items

    def _check_block_header(self, mark: Any) -> None:
        """`|` or `>`, its indicators, then spaces and a comment or the line's end: libyaml also
        takes a comment or a tab straight after the header, which the strict loader refuses."""
        header = _BLOCK_HEADER.fullmatch(self.lines[mark.line], mark.column)
        if header is None:
            raise _Unsure

    def check_tabs(self) -> None:
        """The strict loader refuses a tab anywhere but inside a quoted or block scalar (as
        indentation, as a separator, inside a plain scalar); libyaml accepts several of these."""
        spans = self.quoted_spans
        starts = [start for start, _ in spans]
        for line, content in enumerate(self.lines):
            column = content.find("\t")
            while column != -1:
                place = (line, column)
                index = bisect_right(starts, place) - 1
                if index < 0 or not place < spans[index][1]:
                    raise _Unsure
                column = content.find("\t", column + 1)


def _position(node: Any) -> Position:
    mark = node.start_mark
    return Position(mark.line + 1, mark.column + 1)


def _plain_scalar(value: str) -> Any:
    """An untagged plain scalar as YAML 1.2 reads it; unsure of any spelling but the plainest."""
    resolver, scalar_kind, ruled = _resolver()
    if ruled and value[0] not in ruled:
        return value  # most keys and words: the resolver would try no rule and say str
    tag = str(resolver.resolve(scalar_kind, value, (True, False)))
    if not tag.startswith(_YAML12):
        raise _Unsure
    kind = tag[len(_YAML12) :]
    if kind == "str":
        return value
    if kind == "null":
        return None
    if kind == "bool":
        return value.lower() == "true"
    if kind == "int" and _DECIMAL.fullmatch(value):
        return int(value)
    if kind == "float" and _FLOAT.fullmatch(value):
        return float(value)
    raise _Unsure  # dates, merge keys, hex, octal, underscores, infinities
