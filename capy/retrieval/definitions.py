"""The definition boost: a chunk that declares or assigns the name a query asks for.

A query for `REFRESH_SKEW_MS`, or for "default max attempts", wants the line that gives the
name its value (`export const REFRESH_SKEW_MS = 30_000`, `DEFAULT_MAX_ATTEMPTS = 4`), not the
chunks that merely use it. The declaration shapes are regex templates in the search pack; each
name a chunk declares is split into its words (snake_case, kebab-case, camelCase) and compared
with the query's words in any order, so "segment size default" finds `DefaultSegmentSize` and
"max parcels per shipment" finds `MAX_PARCELS_PER_SHIPMENT` (short words such as "per" may be
in the name without being in the query). The templates compile once per process; a query
compiles nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from capy.retrieval.matching import stem
from capy.retrieval.query import Term
from capy.rules.views.search import DefinitionBoost, Entities

_NAME_SLOT = "{name}"
_NAME = r"(?P<name>[^\W\d][\w-]*)"
_NAME_CHAR = re.compile(r"[\w-]")
_NAME_TAIL = re.compile(r"[\w-]+")
# Words of an identifier: a capitalised word, an acronym run, a lower-case run or digits.
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class WantedNames:
    """What a query asks to see defined."""

    identifiers: frozenset[str]  # identifier-like terms, lowercase
    words: frozenset[str]  # the stems of the query's plain words
    term_count: int
    # Where a covering name can be: an identifier, or a stem less its last letter (which
    # starts every word form), in the lowercased text.
    spots: re.Pattern[str] | None = None
    word_starts: frozenset[str] = frozenset()


def wanted_names(terms: tuple[Term, ...], entities: Entities) -> WantedNames:
    identifiers = frozenset(
        _spelling(term) for term in terms if not term.phrase and entities.is_entity(term.text)
    )
    words = frozenset(stem(_spelling(term)) for term in terms if term.is_word)
    starts = frozenset(_word_start(word) for word in words)
    needles = identifiers | starts
    spots = re.compile("|".join(map(re.escape, sorted(needles, key=len, reverse=True))))
    return WantedNames(identifiers, words, len(terms), spots if needles else None, starts)


def _word_start(word: str) -> str:
    return word[: max(len(word) - 1, 1)]


def _spelling(term: Term) -> str:
    """The corrected word when fuzzy correction changed it: the typo is in no definition."""
    return (term.corrections[0] if term.corrections else term.text).lower()


def definition_boost(content: str, wanted: WantedNames, rule: DefinitionBoost) -> float:
    """weight * the share of the query's terms covered by the best name the chunk defines."""
    if rule.weight <= 0 or not (wanted.identifiers or len(wanted.words) > 1):
        return 0.0
    lowered = content.lower()
    if not _may_define(lowered, wanted):
        return 0.0
    best = 0
    for start, end in _passages(lowered, len(content), wanted):
        for pattern in _compiled(rule.templates):
            for match in pattern.finditer(content, start, end):
                best = max(best, _covered(match.group("name"), wanted, rule.max_extra_word_chars))
                if best >= wanted.term_count:
                    return rule.weight
    return rule.weight * best / wanted.term_count if wanted.term_count else 0.0


def _may_define(lowered: str, wanted: WantedNames) -> bool:
    """Cheap test before the templates run: a name that covers the query must spell one of
    its identifiers or two of its words (a stem less its last letter starts every word form)."""
    if any(identifier in lowered for identifier in wanted.identifiers):
        return True
    present = sum(1 for word in wanted.words if _word_start(word) in lowered)
    return present >= 2


def _passages(lowered: str, length: int, wanted: WantedNames) -> list[tuple[int, int]]:
    """The lines where a covering name could be declared, each with its neighbours (a
    declaration may break its line before the name or before the `=`), merged: the templates
    scan these instead of the whole chunk. `lowered` keeps the offsets of the content when
    lowercasing keeps its length; otherwise the whole chunk is one passage."""
    if wanted.spots is None or len(lowered) != length:
        return [(0, length)]
    passages: list[tuple[int, int]] = []
    for spot in wanted.spots.finditer(lowered):
        if not _may_be_covering_name(lowered, spot, wanted):
            continue
        line_start = lowered.rfind("\n", 0, spot.start())
        start = lowered.rfind("\n", 0, line_start) + 1 if line_start > 0 else 0
        line_end = lowered.find("\n", spot.end())
        end = len(lowered) if line_end == -1 else lowered.find("\n", line_end + 1)
        end = len(lowered) if end == -1 else end
        if passages and start <= passages[-1][1]:
            passages[-1] = (passages[-1][0], max(end, passages[-1][1]))
        else:
            passages.append((start, end))
    return passages


def _may_be_covering_name(lowered: str, spot: re.Match[str], wanted: WantedNames) -> bool:
    """Whether the name-like token around `spot` could cover the query: it is one of the
    query's identifiers, or it holds the starts of two query words (a name is one token of
    word characters and hyphens, so words of prose, each a token of its own, never do)."""
    if spot.group() in wanted.identifiers:
        return True
    start = spot.start()
    while start > 0 and _NAME_CHAR.match(lowered, start - 1):
        start -= 1
    end = _NAME_TAIL.match(lowered, spot.end())
    token = lowered[start : end.end() if end else spot.end()]
    return sum(1 for word_start in wanted.word_starts if word_start in token) >= 2


def _covered(name: str, wanted: WantedNames, max_extra_chars: int) -> int:
    """How many query terms the declared `name` stands for (0: it is another name). A name the
    query spells out is what it asks for, whatever words come with it: "STORAGE_KEY session
    storage key" wants the declaration of STORAGE_KEY as much as "STORAGE_KEY" alone does, so
    it stands for every term. A name made of query words stands for the words it holds."""
    if name.lower() in wanted.identifiers:
        return wanted.term_count
    parts = [stem(word.lower()) for word in _NAME_WORDS.findall(name)]
    found = {part for part in parts if part in wanted.words}
    if len(found) < 2:
        return 0
    if any(part not in wanted.words and len(part) > max_extra_chars for part in parts):
        return 0
    return len(found)


@lru_cache(maxsize=8)
def _compiled(templates: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(
        re.compile(template.replace(_NAME_SLOT, _NAME), re.IGNORECASE | re.MULTILINE)
        for template in templates
    )
