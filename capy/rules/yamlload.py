"""Strict YAML loading that keeps every value's position.

Packs are policy, so a loader that guesses is a liability: duplicate keys, non-string keys,
custom tags and timestamps that YAML would silently turn into dates are all errors here. The
result is plain Python data (dicts, lists, scalars) plus a map from JSON path to file position.
Most texts are read by a fast path (capy.rules.yamlfast) that gives the same result; the
strict parser below reads what it declines, and words every error.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent

from capy.rules.positions import Loaded, PathKey, Position
from capy.rules.yamlfast import fast_load

# Bounds that keep one hostile file from stalling every command (the hooks included). Each sits
# far above what a real pack needs: the largest shipped pack is under 100 KB, nests 8 deep and
# has about 3,000 values, and parsing runs at roughly 70 KB a second.
MAX_PACK_BYTES = 256 * 1024
MAX_PACK_DEPTH = 32
# Values once aliases are expanded: `*anchor` repeats its node, so a 1 KB "billion laughs" file
# of nested aliases would otherwise expand to a billion values.
MAX_PACK_NODES = 100_000


class YamlLoadError(Exception):
    """A pack could not be read as strict YAML; carries a position and a hint."""

    def __init__(self, code: str, message: str, position: Position, hint: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.position = position
        self.hint = hint


class _BoundedComposer(Composer):
    """Counts values as they will be expanded (an alias counts its anchor's whole size) and
    stops at MAX_PACK_NODES, before the expansion ever happens."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._values = 0
        self._anchor_sizes: dict[str, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        before = self._values
        if isinstance(event, AliasEvent):
            self._values += self._anchor_sizes.get(event.anchor, 1)
            self._check(event)
            return super().compose_node(parent, index)
        self._values += 1
        self._check(event)
        node = super().compose_node(parent, index)
        if event.anchor is not None:
            self._anchor_sizes[event.anchor] = self._values - before
        return node

    def _check(self, event: Any) -> None:
        if self._values > MAX_PACK_NODES:
            mark = event.start_mark
            raise YamlLoadError(
                "yaml-too-large",
                f"more than {MAX_PACK_NODES:,} values once aliases are expanded",
                Position(mark.line + 1, mark.column + 1),
                "a pack is plain data; write the values out instead of nesting aliases",
            )


def _parser() -> YAML:
    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    yaml.max_depth = MAX_PACK_DEPTH
    yaml.Composer = _BoundedComposer
    return yaml


def load_yaml(text: str) -> Loaded:
    """Parse one YAML document strictly; raise YamlLoadError with a position on any problem."""
    if len(text) > MAX_PACK_BYTES:  # characters, not bytes: a cheap check before any parsing
        raise too_large_error(len(text.encode("utf-8")))
    fast = fast_load(text, MAX_PACK_DEPTH, MAX_PACK_NODES)
    return fast if fast is not None else load_yaml_strict(text)


def load_yaml_strict(text: str) -> Loaded:
    """The strict parser alone, ruamel's round-trip reader: what the fast path must agree with."""
    if len(text) > MAX_PACK_BYTES:
        raise too_large_error(len(text.encode("utf-8")))
    try:
        documents = list(_parser().load_all(text))
    except MarkedYAMLError as exc:
        raise _from_marked(exc) from None
    except YAMLError as exc:
        raise YamlLoadError("yaml-syntax", _first_line(str(exc)), Position(1, 1)) from None
    except YamlLoadError:
        raise
    except Exception:
        # ruamel's own faults on some hostile texts (a list as a `?` key, a comment it cannot
        # place, `-_` read as an empty number): still one sentence, never a traceback. Any
        # fault of the third-party reader on a text is the text's syntax problem to the user.
        raise YamlLoadError(
            "yaml-syntax",
            "the YAML reader could not make sense of this file",
            Position(1, 1),
            "packs are plain `key: value` mappings and `- item` lists; remove `?` complex keys "
            "and unusual comment placement",
        ) from None
    if len(documents) != 1:
        raise YamlLoadError(
            "yaml-syntax",
            f"expected exactly one YAML document, found {len(documents)}",
            Position(1, 1),
            "a pack is one document; remove extra `---` separators",
        )
    positions: dict[PathKey, Position] = {(): Position(1, 1)}
    key_positions: dict[PathKey, Position] = {}
    data = _plain(documents[0], (), positions, key_positions)
    return Loaded(data, positions, key_positions)


def too_large_error(size: int) -> YamlLoadError:
    """The error for a pack file of `size` bytes, over MAX_PACK_BYTES."""
    return YamlLoadError(
        "yaml-too-large",
        f"the file is {size:,} bytes; a pack may hold at most {MAX_PACK_BYTES:,}",
        Position(1, 1),
        "split it into several overlay files, one concern each",
    )


def _from_marked(exc: MarkedYAMLError) -> YamlLoadError:
    mark = exc.problem_mark or exc.context_mark
    position = Position(mark.line + 1, mark.column + 1) if mark else Position(1, 1)
    problem = exc.problem or exc.context or "invalid YAML"
    name = type(exc).__name__
    if "MaxDepth" in name:
        return YamlLoadError(
            "yaml-too-deep",
            f"values nested more than {MAX_PACK_DEPTH} levels deep",
            position,
            "a pack nests a few levels at most; flatten this part",
        )
    if "Duplicate" in name:
        key = _first_line(problem).split('"')[1] if '"' in problem else ""
        return YamlLoadError(
            "duplicate-key",
            f"duplicate key {key!r}" if key else "duplicate key",
            position,
            "each key may appear once in a mapping; merge the two entries",
        )
    hint = "check indentation and quoting on this line or the one above"
    if "\\t" in problem or "\t" in problem:
        hint = "YAML does not allow tabs for indentation; use spaces"
    return YamlLoadError("yaml-syntax", _first_line(problem), position, hint)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "invalid YAML"


def _record(node: Any, path: PathKey, table: dict[PathKey, Position]) -> None:
    lc = getattr(node, "lc", None)
    if lc is not None and lc.line is not None:
        table[path] = Position(lc.line + 1, lc.col + 1)


def _plain(node: Any, path: PathKey, positions: dict, key_positions: dict) -> Any:
    if _custom_tag(node):
        raise YamlLoadError(
            "yaml-tag",
            f"custom YAML tag {_tag_of(node)!r} is not allowed",
            positions.get(path, Position(1, 1)),
            "packs are plain data; remove the tag",
        )
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            kline, kcol = node.lc.key(key) if key in node.lc.data else (None, None)
            key_pos = Position(kline + 1, kcol + 1) if kline is not None else positions.get(path)
            if not isinstance(key, str):
                raise YamlLoadError(
                    "wrong-type",
                    f"mapping key {key!r} is a {type(key).__name__}, not a string",
                    key_pos or Position(1, 1),
                    "quote the key",
                )
            child = (*path, key)
            key_positions[child] = key_pos or Position(1, 1)
            vline, vcol = node.lc.value(key) if key in node.lc.data else (None, None)
            positions[child] = (
                Position(vline + 1, vcol + 1) if vline is not None else key_positions[child]
            )
            out[key] = _plain(value, child, positions, key_positions)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            line, col = node.lc.item(index)
            positions[child] = Position(line + 1, col + 1)
            items.append(_plain(value, child, positions, key_positions))
        return items
    if isinstance(node, TaggedScalar):
        return _plain(node.value, path, positions, key_positions)
    if isinstance(node, dt.date | dt.datetime):
        raise YamlLoadError(
            "silent-coercion",
            f"value {node.isoformat()!r} was read as a date",
            positions.get(path, Position(1, 1)),
            'quote it to keep it text: "' + node.isoformat()[:10] + '"',
        )
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    raise YamlLoadError(
        "yaml-tag",
        f"unsupported YAML value of type {type(node).__name__}",
        positions.get(path, Position(1, 1)),
        "packs hold only mappings, lists, strings, numbers, booleans and null",
    )


def _tag_of(node: Any) -> str:
    tag = getattr(node, "tag", None)
    return str(getattr(tag, "value", tag) or "")


def _custom_tag(node: Any) -> bool:
    tag = _tag_of(node)
    return bool(tag) and not tag.startswith("tag:yaml.org,2002:")
