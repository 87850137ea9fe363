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

from capy.retrieval.query import Term

_WORD = re.compile(r"[^\W_]+")
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
    return [match.group().lower() for match in _WORD.finditer(text)]


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


class TextIndex:
    """The words of one text with their character spans, stemmed once, looked up by first stem."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self.stems: list[str] = []
        self.spans: list[Span] = []
        self.positions: dict[str, list[int]] = {}
        for index, match in enumerate(_WORD.finditer(text)):
            word = stem(match.group().lower())
            self.stems.append(word)
            self.spans.append(match.span())
            self.positions.setdefault(word, []).append(index)

    @property
    def lower(self) -> str:
        if self._lower is None:
            lowered = self.text.lower()
            if len(lowered) != len(self.text):  # "İ" lowers to two characters: keep offsets true
                lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in self.text)
            self._lower = lowered
        return self._lower

    def occurrences(self, pattern: TermPattern) -> list[Span]:
        """Character spans where the term occurs, in text order."""
        spans = [span for seq in pattern.alternatives for span in self._sequence_spans(seq)]
        if not spans:
            spans = self._substring_spans(pattern.substrings)
        return sorted(set(spans))

    def _sequence_spans(self, seq: tuple[str, ...]) -> list[Span]:
        found = []
        for start in self.positions.get(seq[0], ()):
            end = start + len(seq)
            if self.stems[start:end] == list(seq):
                found.append((self.spans[start][0], self.spans[end - 1][1]))
        return found

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
    index = TextIndex(text)
    return [index.occurrences(pattern) for pattern in patterns]
