"""JSON: chunks follow key paths; arrays are batched with their items' identity in the title.

Content is compact JSON (`"key": value` lines for an object's members, one item per line for an
array batch) serialised with ensure_ascii=False and the default separators, so values stay
verbatim and read the way the pretty-printed original does: `"total_count": 287` is findable as
a key, a value and the pair. A minified original (`"ruleId":"eqeqeq","line":153`, what
`eslint -f json` or an API prints) keeps its own tight separators instead, so a record copied
from the output is found, and shown, as the output spelled it. A document that fits in one
chunk is kept exactly as it came.
"""

from __future__ import annotations

import json
from typing import Any

from capy.chunking.pieces import Piece, nbytes, window_pieces
from capy.rules.views.chunking import ChunkingPack


def chunk_json(text: str, label: str, rules: ChunkingPack) -> list[Piece] | None:
    """Chunks of a JSON document, or None when the text does not parse as one."""
    try:
        data = json.loads(text)
        stripped = text.strip()
        if nbytes(stripped) <= rules.max_chunk_bytes:
            return [Piece(None, stripped)]
        tight = rules.json_.keep_minified_spelling and _minified(data, stripped)
        walker = _Walker(rules, _TIGHT if tight else _SPACED)
        walker.walk(data, ())
        return walker.out
    except (ValueError, RecursionError):
        return None


_SPACED = (", ", ": ")
_TIGHT = (",", ":")


def _minified(data: Any, text: str) -> bool:
    """Whether `text` is `data` on one line with tight separators, exactly."""
    if "\n" in text:
        return False
    return any(
        json.dumps(data, ensure_ascii=ascii_only, separators=_TIGHT) == text
        for ascii_only in (False, True)
    )


class _Walker:
    def __init__(self, rules: ChunkingPack, separators: tuple[str, str] = _SPACED) -> None:
        self.separators = separators
        self.rules = rules
        self.config = rules.json_
        self.limit = rules.max_chunk_bytes
        # Identity fields by their place in the pack's list: most items hold few of them, so
        # each item's own keys are looked up instead of every listed name in every item.
        self._identity_rank = {name: rank for rank, name in enumerate(self.config.identity_fields)}
        self.out: list[Piece] = []

    def _dumps(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=self.separators)

    def walk(self, value: Any, path: tuple[str, ...], text: str | None = None) -> None:
        """`text`: the value already serialised by the caller (each level serialises its members
        to size them; serialising a big member again on the way down cost a third of the time)."""
        if text is None:
            text = self._dumps(value)
        if nbytes(text) <= self.limit or not isinstance(value, (dict, list)) or not value:
            self.emit(path, text)
        elif len(path) >= self.config.max_key_path_depth:
            # Past the depth cap the value is text: one item per line, cut into windows.
            self.emit(path, json.dumps(value, ensure_ascii=False, indent=1))
        elif isinstance(value, dict):
            self.walk_object(value, path)
        else:
            self.walk_array(value, path)

    def emit(self, path: tuple[str, ...], text: str, *, batch: bool = False) -> None:
        """One chunk (or line windows of it) titled by the path; `batch` marks a last segment
        that lists what the content already holds (member keys, item names)."""
        separator = self.config.key_path_separator
        title = separator.join(path) or None
        keys = separator.join(path[:-1] if batch else path)
        if len(keys) > self.rules.titles.max_chars - len(self.rules.titles.ellipsis):
            # The clipped title would lose keys; the content keeps the whole path instead.
            text = f"{keys}\n{text}"
        if nbytes(text) <= self.limit:
            self.out.append(Piece(title, text))
            return
        lines = text.split("\n")
        for piece in window_pieces(
            lines, first_line=1, window=len(lines), overlap=0, rules=self.rules
        ):
            self.out.append(Piece(title, piece.content))

    def walk_object(self, value: dict[str, Any], path: tuple[str, ...]) -> None:
        """Small members share chunks (in order), titled by their keys; a big member recurses."""
        group: list[tuple[str, str]] = []
        size = 0
        for key, member in value.items():
            text = self._dumps(member)
            line = f"{self._dumps(key)}{self.separators[1]}{text}"
            line_size = nbytes(line)
            if line_size > self.limit:
                self._flush_group(path, group)
                group, size = [], 0
                self.walk(member, (*path, str(key)), text)
                continue
            if group and size + 1 + line_size > self.limit:
                self._flush_group(path, group)
                group, size = [], 0
            group.append((str(key), line))
            size += line_size + (1 if size else 0)
        self._flush_group(path, group)

    def _flush_group(self, path: tuple[str, ...], group: list[tuple[str, str]]) -> None:
        if group:
            keys = "{" + ", ".join(key or '""' for key, _ in group) + "}"
            self.emit((*path, keys), "\n".join(line for _, line in group), batch=True)

    def walk_array(self, value: list[Any], path: tuple[str, ...]) -> None:
        """Items batched up to array_batch_items and max_chunk_bytes; a big item recurses."""
        batch: list[tuple[int, Any, str]] = []
        size = 0
        for index, item in enumerate(value):
            text = self._dumps(item)
            text_size = nbytes(text)
            if text_size > self.limit:
                self._flush_batch(path, batch)
                batch, size = [], 0
                self.walk(item, (*path, self._segment([(index, item)])), text)
                continue
            full = len(batch) >= self.config.array_batch_items
            if batch and (full or size + 1 + text_size > self.limit):
                self._flush_batch(path, batch)
                batch, size = [], 0
            batch.append((index, item, text))
            size += text_size + (1 if size else 0)
        self._flush_batch(path, batch)

    def _flush_batch(self, path: tuple[str, ...], batch: list[tuple[int, Any, str]]) -> None:
        if batch:
            segment = self._segment([(index, item) for index, item, _ in batch])
            self.emit((*path, segment), "\n".join(text for _, _, text in batch), batch=True)

    def _segment(self, items: list[tuple[int, Any]]) -> str:
        """`[id=42, name=foo]` for one item, `[foo, bar, baz]` for a batch, else `[3-22]`.

        A batch names each item by its first non-numeric identity value: in a title that lists
        several items, `auth flow: progress bar is confusing` says more than `2180152810`.
        """
        identities = [self._identity(item) for _, item in items]
        if len(items) == 1 and identities[0]:
            pairs = identities[0][:2]
            return "[" + ", ".join(f"{key}={value}" for key, value in pairs) + "]"
        if len(items) > 1 and all(identities):
            return "[" + ", ".join(_best_name(identity) for identity in identities) + "]"
        first, last = items[0][0], items[-1][0]
        return f"[{first}]" if first == last else f"[{first}-{last}]"

    def _identity(self, item: Any) -> list[tuple[str, str]]:
        """Up to two identity fields of an object, or of the first nested object that has any
        (a Kubernetes item is named by `metadata.name`)."""
        if not isinstance(item, dict):
            return []
        found = self._fields(item)
        if found:
            return found
        for member in item.values():
            if isinstance(member, dict) and (found := self._fields(member)):
                return found
        return []

    def _fields(self, item: dict[str, Any]) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        rank = self._identity_rank
        for name in sorted((key for key in item if key in rank), key=rank.__getitem__):
            value = item[name]
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                continue
            text = " ".join(str(value).split())
            if text and len(text) <= self.config.max_identity_chars:
                found.append((name, text))
        return found


def _best_name(identity: list[tuple[str, str]]) -> str:
    return next((value for _, value in identity if not _numeric(value)), identity[0][1])


def _numeric(value: str) -> bool:
    return value.replace(".", "", 1).lstrip("-").isdigit()
