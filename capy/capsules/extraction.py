"""Entities and relations in a capsule, found by the capsules pack's `entities` and `relations`
rules (pure: no database).

An entity rule's regex names the entity with its group `name`; a rule with `metadata` reads
that metadata value instead of the content. A relation rule finds the phrase that relates two
entities: the subject is the nearest mention ending before the phrase and the object the nearest
starting after it, on the same line and within the pack's window.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.capsules.model import Capsule
    from capy.rules.views.capsules import CapsulesPack, EntityRule, Relations

# Characters that frame a name in prose without being part of it.
_FRAMING = " \t\r\n.,;:'\"`()[]{}<>"


@dataclass(frozen=True, order=True)
class Entity:
    type: str
    name: str


@dataclass(frozen=True)
class Mention:
    entity: Entity
    start: int  # offset in the content; -1 for a mention found in metadata
    end: int


@dataclass(frozen=True, order=True)
class Relation:
    subject: Entity
    relation: str
    object: Entity


@dataclass(frozen=True)
class Extracted:
    mentions: Counter[Entity]
    relations: frozenset[Relation]


def extract(capsule: Capsule, pack: CapsulesPack) -> Extracted:
    """Every entity `capsule` names (with how often) and every relation between them."""
    if capsule.forgotten:
        return Extracted(Counter(), frozenset())
    mentions = list(find_mentions(capsule.content, pack.entities, capsule.kind))
    mentions.extend(_metadata_mentions(capsule, pack.entities))
    in_text = [mention for mention in mentions if mention.start >= 0]
    return Extracted(
        Counter(mention.entity for mention in mentions),
        frozenset(find_relations(capsule.content, in_text, pack.relations)),
    )


def find_mentions(
    text: str, rules: Iterable[EntityRule], kind: str | None = None
) -> Iterator[Mention]:
    """Mentions in `text` by the content rules (those without `metadata`) that apply to `kind`."""
    for rule in rules:
        if not rule.active or rule.metadata is not None:
            continue
        if rule.kinds and kind not in rule.kinds:
            continue
        yield from _matches(rule, text, offset=True)


def _metadata_mentions(capsule: Capsule, rules: Iterable[EntityRule]) -> Iterator[Mention]:
    for rule in rules:
        if not rule.active or rule.metadata is None:
            continue
        if rule.kinds and capsule.kind not in rule.kinds:
            continue
        value = capsule.metadata.get(rule.metadata)
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str):
                yield from _matches(rule, item, offset=False)


def _matches(rule: EntityRule, text: str, *, offset: bool) -> Iterator[Mention]:
    for match in _compiled(rule.pattern).finditer(text):
        name = normalise_name(match.group("name") or "", rule.case, rule.trim)
        if name:
            start, end = match.span("name") if offset else (-1, -1)
            yield Mention(Entity(rule.type, name), start, end)


def normalise_name(raw: str, case: str = "keep", trim: str | None = None) -> str:
    name = " ".join(raw.split())
    if trim:
        while name.startswith(trim):
            name = name[len(trim) :]
    name = name.strip(_FRAMING)
    return name.lower() if case == "lower" else name


def find_relations(text: str, mentions: list[Mention], relations: Relations) -> Iterator[Relation]:
    ordered = sorted(mentions, key=lambda mention: (mention.start, mention.end))
    for rule in relations.rules:
        if not rule.active:
            continue
        for phrase in _compiled(rule.pattern).finditer(text):
            before = _nearest_before(text, ordered, phrase.start(), relations.window_chars)
            after = _nearest_after(text, ordered, phrase.end(), relations.window_chars)
            if before is None or after is None or before.entity == after.entity:
                continue
            subject, object_ = (after, before) if rule.reverse else (before, after)
            yield Relation(subject.entity, rule.relation, object_.entity)


def _nearest_before(text: str, mentions: list[Mention], at: int, window: int) -> Mention | None:
    found = [m for m in mentions if m.end <= at and at - m.end <= window]
    found = [m for m in found if "\n" not in text[m.end : at]]
    return max(found, key=lambda m: (m.end, -m.start), default=None)


def _nearest_after(text: str, mentions: list[Mention], at: int, window: int) -> Mention | None:
    found = [m for m in mentions if m.start >= at and m.start - at <= window]
    found = [m for m in found if "\n" not in text[at : m.start]]
    return min(found, key=lambda m: (m.start, -m.end), default=None)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
