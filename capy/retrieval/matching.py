"""Where query terms occur inside a chunk, for boosts and snippets.

FTS5 tells which rows match but not where, so the core finds the spots itself, the way the
porter table matched them: words split like unicode61 (letters and digits; `_` separates),
compared case-insensitively after the same Porter stemming the table applies. A term the words
do not find (a trigram-only hit on part of a word) is looked up as a case-insensitive substring
instead, so every hit can show the text that made it match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from capy.retrieval.porter import porter_stem
from capy.retrieval.query import WORD_PART, Term

_SUBSTRING_MIN_CHARS = 3  # the trigram table's own floor: shorter substrings match nothing

Span = tuple[int, int]


@lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """The word as the porter table stores it, so that every word form the table matched
    ("merged" for "merge", "complexity" for "complex") is found here too."""
    return porter_stem(word)


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
        # A joined word form (`timeout`) may sit inside an identifier (`connectTimeout`).
        joined = (form for form in term.forms if " " not in form)
        substrings = tuple(
            v.lower()
            for v in (term.text, *term.corrections, *joined)
            if len(v) >= _SUBSTRING_MIN_CHARS
        )
        patterns.append(TermPattern(term, alternatives, substrings))
    return tuple(patterns)


# A letter or digit: what unicode61 keeps in a word (`_` and punctuation separate words).
_WORD_CHAR = re.compile(r"[^\W_]")
_WORD_REST = re.compile(r"[^\W_]*")


@dataclass(frozen=True)
class _Scanner:
    """Every term's first words, found in one pass over a chunk for all terms."""

    # A word stems to `s` only if it starts with `s` less its last letter (the stemmer strips
    # suffixes and turns a final y into i): the words starting with one of these may stem to
    # some alternative's first stem, and only they are stemmed.
    prefixes: tuple[str, ...]
    # First stem -> (term index, whole stemmed sequence) for every alternative starting with it.
    by_first: dict[str, tuple[tuple[int, tuple[str, ...]], ...]]

    def first_words(self, lower: str) -> list[Span]:
        """The words of `lower` starting with a prefix, in text order. `str.find` per prefix
        then a word-start test: several times faster than one regex alternation with a
        look-behind, which tries every prefix at every position of the chunk."""
        starts = set()
        for prefix in self.prefixes:
            at = lower.find(prefix)
            while at != -1:
                if at == 0 or not _WORD_CHAR.match(lower, at - 1):
                    starts.add(at)
                at = lower.find(prefix, at + 1)
        return [(start, _end_of_word(lower, start)) for start in sorted(starts)]


def _end_of_word(lower: str, start: int) -> int:
    found = _WORD_REST.match(lower, start)
    return found.end() if found else start


@lru_cache(maxsize=16)
def _scanner(patterns: tuple[TermPattern, ...]) -> _Scanner:
    by_first: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for index, pattern in enumerate(patterns):
        for seq in pattern.alternatives:
            by_first.setdefault(seq[0], []).append((index, seq))
    prefixes = tuple(sorted({s if len(s) <= 3 else s[:-1] for s in by_first}))
    return _Scanner(prefixes, {k: tuple(v) for k, v in by_first.items()})


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
        lower = self.lower
        for start, word_end in scanner.first_words(lower):
            sequences = scanner.by_first.get(stem(lower[start:word_end]))
            if not sequences:
                continue
            longest = max(len(seq) for _, seq in sequences)
            following = self._following(word_end, longest - 1)
            for index, seq in sequences:
                rest = following[: len(seq) - 1]
                if len(rest) == len(seq) - 1 and all(
                    stem(word) == part for (word, _), part in zip(rest, seq[1:], strict=True)
                ):
                    end = rest[-1][1] if rest else word_end
                    found[index].append((start, end))
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
