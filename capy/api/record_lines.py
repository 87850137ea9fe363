"""A long JSON line shown as records: who each record is and what in it matches.

JSON arrays are often printed one record per line (issues, pull requests, tool definitions,
lint messages), 0.5-3 KB a line. A byte window around the first match cuts away exactly what an
agent asked for: the record's `number` or `name`, its `required` list, the sentence further into
its body, the next record. Here such a line is parsed and shown record by record, within the
executor pack's `intent_reply.records` sizes:

- records holding the query's words first (the rarest words weigh most), then the others in
  order while room is left, each shown in its place with `…` for the ones left out;
- within a record, its identity fields (the chunking pack's `json.identity_fields`), then the
  fields holding the query's words, then its short fields, in the record's own order; a long
  text field that matches is cut to the sentences that hold the words.

Only a line that re-serialises to exactly its own text (compact or spaced separators, escaped
or not) is restructured, so every field shown is the output's own bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.retrieval.matching import TermPattern
    from capy.rules import RuleSet
    from capy.rules.views.executor import RecordLines

GAP = "…"

# `"key": value` (an object's member on its own line) with an optional trailing comma.
_MEMBER = re.compile(r'(?s)(\s*"(?:[^"\\]|\\.)*"\s*:\s*)(.*?)(,?)\s*')
# Sentence ends and escaped line breaks inside a JSON string's serialised text.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\\n|\\r")
_STYLES = (
    ((",", ":"), False),
    ((", ", ": "), False),
    ((",", ":"), True),
    ((", ", ": "), True),
)


def record_view(line: str, weights: list[tuple[TermPattern, float]], rules: RuleSet) -> str | None:
    """`line` shown as records, or None when it is not JSON records that re-serialise exactly
    (the caller then cuts it as text)."""
    parsed = _parse(line)
    if parsed is None:
        return None
    prefix, value, suffix, style = parsed
    if not _holds_records(value):
        return None
    shape = rules.view("executor").limits.output.intent_reply.records
    identity = frozenset(rules.view("chunking").json_.identity_fields)
    factor = rules.view("executor").limits.output.intent_reply.line_weights.substring_factor
    renderer = _Renderer(style, shape, identity, _scorer(weights, factor))
    room = shape.max_line_bytes - _size(prefix) - _size(suffix)
    return prefix + renderer.value(value, room) + suffix


def _parse(line: str) -> tuple[str, Any, str, tuple[tuple[str, str], bool]] | None:
    """(prefix, value, suffix, serialisation style) of a line holding one JSON value, itself or
    as an object's member, or None."""
    body = line.rstrip()
    candidates = [
        ("", body[:-1] if body.endswith(",") else body, "," if body.endswith(",") else "")
    ]
    member = _MEMBER.fullmatch(body)
    if member:
        candidates.append((member.group(1), member.group(2), member.group(3)))
    for prefix, text, suffix in candidates:
        indent = text[: len(text) - len(text.lstrip())]
        try:
            value = json.loads(text)
        except ValueError:
            continue
        for separators, ascii_only in _STYLES:
            if json.dumps(value, separators=separators, ensure_ascii=ascii_only) == text.strip():
                return prefix + indent, value, suffix, (separators, ascii_only)
    return None


def _holds_records(value: Any) -> bool:
    if isinstance(value, dict):
        return bool(value)
    return bool(value) and isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _scorer(weights: list[tuple[TermPattern, float]], factor: float) -> Callable[[str], float]:
    """Text -> the weights of the distinct query terms it holds, a substring match counting
    `factor` of a whole word."""
    from capy.api.line_weights import match_weight
    from capy.retrieval.matching import term_spans

    patterns = tuple(pattern for pattern, _ in weights)

    def score(text: str) -> float:
        total = 0.0
        for (_, weight), spans in zip(weights, term_spans(text, patterns), strict=True):
            if spans:
                total += max(match_weight(text, span, weight, factor) for span in spans)
        return total

    return score


@dataclass(frozen=True)
class _Renderer:
    style: tuple[tuple[str, str], bool]
    shape: RecordLines
    identity: frozenset[str]
    score: Callable[[str], float]

    def dumps(self, value: Any) -> str:
        separators, ascii_only = self.style
        return json.dumps(value, separators=separators, ensure_ascii=ascii_only)

    def value(self, value: Any, room: int) -> str:
        """`value` within `room` bytes where it can be cut (records, fields, text)."""
        text = self.dumps(value)
        if _size(text) <= room:
            return text
        if isinstance(value, dict):
            return self.record(value, room)
        if _holds_records(value):
            return self.records(value, room)
        if isinstance(value, str):
            return self.sentences(text, room)
        return _cut(text, room)

    def records(self, items: list[dict[str, Any]], room: int) -> str:
        """The records holding the query's words first, then the others in order, each within
        `max_record_bytes`; at least the best one."""
        comma = self.style[0][0]
        scores = [self.score(self.dumps(item)) for item in items]
        order = sorted(range(len(items)), key=lambda n: (-scores[n], n))
        chosen: dict[int, str] = {}
        for number in order:
            cap = min(self.shape.max_record_bytes, room)
            shown = self.value(items[number], cap)
            trial = {**chosen, number: shown}
            if chosen and _size(_joined(trial, len(items), "[", "]", comma)) > room:
                break  # the room is spent: the rest would be cut to nothing anyway
            chosen = trial
        return _joined(chosen, len(items), "[", "]", comma)

    def record(self, item: dict[str, Any], room: int) -> str:
        """Identity fields, then matching fields (best first), then short fields in order,
        shown in the record's own order while they fit."""
        separators = self.style[0]
        fields = [(self.dumps(str(key)) + separators[1], member) for key, member in item.items()]
        texts = [name + self.dumps(member) for name, member in fields]
        scores = [self.score(text) for text in texts]
        keys = list(item)
        identity = [n for n, key in enumerate(keys) if key in self.identity]
        matching = sorted((n for n in range(len(keys)) if scores[n] > 0), key=lambda n: -scores[n])
        short = [
            n for n, text in enumerate(texts) if _size(text) <= self.shape.max_short_field_bytes
        ]
        chosen: dict[int, str] = {}
        for number in dict.fromkeys([*identity, *matching, *short]):
            used = _size(_joined(chosen, len(keys), "{", "}", separators[0]))
            name, member = fields[number]
            left = room - used - _size(name) - _size(separators[0]) - len(GAP.encode())
            if _size(texts[number]) <= left:
                shown = texts[number]
            elif scores[number] > 0 and left > 0:
                shown = name + self.value(member, left)
            else:
                continue
            trial = {**chosen, number: shown}
            if _size(_joined(trial, len(keys), "{", "}", separators[0])) <= room:
                chosen = trial
        return _joined(chosen, len(keys), "{", "}", separators[0])

    def sentences(self, text: str, room: int) -> str:
        """A serialised string cut to the sentences holding the query's words, in order."""
        inner = text[1:-1]
        pieces, at = [], 0
        for end in _SENTENCE_END.finditer(inner):
            pieces.append((at, inner[at : end.start()]))
            at = end.end()
        pieces.append((at, inner[at:]))
        kept = [(at, piece) for at, piece in pieces if piece and self.score(piece) > 0]
        if not kept:
            return _cut(text, room)
        out, used = [], 2
        for at, piece in kept:
            cost = _size(piece) + len(GAP.encode())
            if out and used + cost > room:
                break
            out.append((at, _cut(piece, room - used - len(GAP.encode()))))
            used += cost
        body = ""
        for index, (at, piece) in enumerate(out):
            starts_text = at == 0 and index == 0
            body += ("" if starts_text else GAP) + piece
        ends_text = out[-1][0] + len(out[-1][1]) >= len(inner)
        return '"' + body + ("" if ends_text else GAP) + '"'


def _joined(chosen: dict[int, str], count: int, open_: str, close: str, comma: str) -> str:
    """The chosen parts in order, one `…` for each run of parts left out."""
    parts: list[str] = []
    for number in range(count):
        if number in chosen:
            parts.append(chosen[number])
        elif not parts or parts[-1] != GAP:
            parts.append(GAP)
    return open_ + comma.join(parts) + close


def _cut(text: str, room: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= room:
        return text
    return data[: max(room - len(GAP.encode()), 0)].decode("utf-8", "ignore") + GAP


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
