"""Where query terms occur inside a chunk, for boosts and snippets.

FTS5 tells which rows match but not where, so the core finds the spots itself, the way the
porter table matched them: words split like unicode61 (letters and digits; `_` separates),
compared case-insensitively after a light suffix strip that folds the plural and -ed/-ing forms
porter folds. A term the words do not find (a trigram-only hit on part of a word) is looked up as
a case-insensitive substring instead, so every hit can show the text that made it match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from capy.retrieval.query import WORD_PART, Term

_VOWEL = re.compile(r"[aeiouy]")
_SUBSTRING_MIN_CHARS = 3  # the trigram table's own floor: shorter substrings match nothing

Span = tuple[int, int]


@lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """Porter's step 1 in small: enough that "locks", "locked" and "locking" meet "lock"."""
    if len(word) <= 3:
        return word
    if word.endswith(("sses", "ies")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
            word = base[:-1] if len(base) > 3 and base[-1] == base[-2] not in "lsz" else base
            break
    if len(word) > 3 and word.endswith("y") and word[-2] not in "aeiou":
        word = word[:-1] + "i"
    return word


def words_of(text: str) -> list[str]:
    return [match.group().lower() for match in WORD_PART.finditer(text)]


@dataclass(frozen=True)
class TermPattern:
    """The ways one query term can appear: each alternative is a sequence of stemmed words
    (a phrase, or an identifier that unicode61 splits, has several)."""

    term: Term
    alternatives: tuple[tuple[str, ...], ...]
    substrings: tuple[str, ...]  # lowercase, for the substring fallback


def compile_terms(terms: tuple[Term, ...]) -> tuple[TermPattern, ...]:
    patterns = []
    for term in terms:
        variants = term.porter_variants()
        alternatives = tuple(
            seq for seq in (tuple(stem(w) for w in words_of(v)) for v in variants) if seq
        )
        substrings = tuple(
            v.lower() for v in (term.text, *term.corrections) if len(v) >= _SUBSTRING_MIN_CHARS
        )
        patterns.append(TermPattern(term, alternatives, substrings))
    return tuple(patterns)


@dataclass(frozen=True)
class _Scanner:
    """Every term's first words in one regex, so a chunk is scanned once for all terms."""

    # Words that may stem to some alternative's first stem: one regex scan of the lowercased
    # text finds them, rather than stemming every word of a chunk in Python.
    first_words: re.Pattern[str] | None
    # First stem -> (term index, whole stemmed sequence) for every alternative starting with it.
    by_first: dict[str, tuple[tuple[int, tuple[str, ...]], ...]]


@lru_cache(maxsize=16)
def _scanner(patterns: tuple[TermPattern, ...]) -> _Scanner:
    by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for index, pattern in enumerate(patterns):
        for seq in pattern.alternatives:
            by_first.setdefault(seq[0], []).append((index, seq))
    return _Scanner(_first_words(set(by_first)), {k: tuple(v) for k, v in by_first.items()})


def _first_words(stems: set[str]) -> re.Pattern[str] | None:
    """Whole words that start like one of `stems`: a word stems to `s` only if it starts with
    `s` less its last letter (the stemmer strips suffixes and turns a final y into i)."""
    if not stems:
        return None
    prefixes = sorted({s if len(s) <= 3 else s[:-1] for s in stems}, key=len, reverse=True)
    alternation = "|".join(map(re.escape, prefixes))
    return re.compile(rf"(?<![^\W_])(?:{alternation})[^\W_]*")


class TextIndex:
    """One text, searched for query terms the way the porter table matched them.

    Only words that can be a term's first word are stemmed, so a long chunk costs one regex
    scan for all terms instead of a Python step per word."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None

    @property
    def lower(self) -> str:
        if self._lower is None:
            lowered = self.text.lower()
            if len(lowered) != len(self.text):  # "İ" lowers to two characters: keep offsets true
                lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in self.text)
            self._lower = lowered
        return self._lower

    def occurrences(self, patterns: tuple[TermPattern, ...]) -> list[list[Span]]:
        """For each term, the character spans where it occurs, in text order."""
        found = self._sequence_spans(patterns) if self.text else [[] for _ in patterns]
        return [
            sorted(set(spans or self._substring_spans(pattern.substrings)))
            for spans, pattern in zip(found, patterns, strict=True)
        ]

    def _sequence_spans(self, patterns: tuple[TermPattern, ...]) -> list[list[Span]]:
        scanner = _scanner(patterns)
        found: list[list[Span]] = [[] for _ in patterns]
        if scanner.first_words is None:
            return found
        for match in scanner.first_words.finditer(self.lower):
            sequences = scanner.by_first.get(stem(match.group()))
            if not sequences:
                continue
            longest = max(len(seq) for _, seq in sequences)
            following = self._following(match.end(), longest - 1)
            for index, seq in sequences:
                rest = following[: len(seq) - 1]
                if len(rest) == len(seq) - 1 and all(
                    stem(word) == part for (word, _), part in zip(rest, seq[1:], strict=True)
                ):
                    end = rest[-1][1] if rest else match.end()
                    found[index].append((match.start(), end))
        return found

    def _following(self, position: int, count: int) -> list[tuple[str, int]]:
        """The next `count` words after `position`, with where each ends."""
        words: list[tuple[str, int]] = []
        if count <= 0:
            return words
        for match in WORD_PART.finditer(self.lower, position):
            words.append((match.group(), match.end()))
            if len(words) == count:
                break
        return words

    def _substring_spans(self, substrings: tuple[str, ...]) -> list[Span]:
        found = []
        for needle in substrings:
            start = self.lower.find(needle)
            while start != -1 and len(found) < 64:
                found.append((start, start + len(needle)))
                start = self.lower.find(needle, start + 1)
        return found


def term_spans(text: str, patterns: tuple[TermPattern, ...]) -> list[list[Span]]:
    """For each pattern, the spans where it occurs in `text`."""
    return TextIndex(text).occurrences(patterns)
