"""Typo correction against the corpus vocabulary: Levenshtein distance, scaled by term length.

Only words missing from the vocabulary are corrected, each to the closest indexed word within
the pack's distance band (the more frequent word on a tie). A word with no such neighbour stays
as it is, so an absent term (a negative query) never turns into a different, present one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from capy.retrieval.model import Corpus
from capy.retrieval.query import Term
from capy.rules.views.search import Fuzzy


def levenshtein(a: str, b: str, limit: int) -> int:
    """Edit distance between `a` and `b`, or `limit + 1` as soon as it must exceed `limit`.

    Only the diagonal band |i - j| <= limit can hold a distance within the limit, so the
    cost is O(len * limit) instead of O(len * len)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    if len(a) < len(b):
        a, b = b, a
    over = limit + 1
    previous = [j if j <= limit else over for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        low, high = max(1, i - limit), min(len(b), i + limit)
        current = [over] * (len(b) + 1)
        current[0] = i if i <= limit else over
        char_a = a[i - 1]
        for j in range(low, high + 1):
            cost = 0 if char_a == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost, over)
        if min(current[max(low - 1, 0) : high + 1]) > limit:
            return over
        previous = current
    return previous[-1]


@lru_cache(maxsize=65536)
def _letters(word: str) -> int:
    """A bit per character present (folded to 64 bits): one edit changes at most two bits, so
    words whose masks differ in more than 2 * d bits are more than d edits apart."""
    mask = 0
    for char in set(word):
        mask |= 1 << (ord(char) & 63)
    return mask


def closest(term: str, words: Iterable[str], max_distance: int, count: int = 1) -> tuple[str, ...]:
    """Up to `count` words within `max_distance` of `term`, nearest first; among equally near
    words the earlier one wins (words come most frequent first)."""
    found = []
    letters = _letters(term)
    for order, word in enumerate(words):
        if abs(len(word) - len(term)) > max_distance:
            continue
        if (letters ^ _letters(word)).bit_count() > 2 * max_distance:
            continue
        distance = levenshtein(term, word, max_distance)
        if distance <= max_distance:
            found.append((distance, order, word))
    found.sort()
    return tuple(word for _, _, word in found[:count])


class Corrector:
    """Corrects query terms against a corpus, with a process-local LRU of past corrections.

    The cache is keyed by the vocabulary snapshot the corpus hands out: a corpus that caches its
    vocabulary returns the same object until new words arrive, so entries stay valid exactly as
    long as that snapshot does; a corpus that streams fresh rows every time never hits it.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._cache: OrderedDict[str, tuple[object, tuple[str, ...]]] = OrderedDict()

    def correct(self, corpus: Corpus, terms: tuple[Term, ...], rules: Fuzzy) -> tuple[Term, ...]:
        corrected = []
        for term in terms:
            corrections = self._corrections(corpus, term, rules) if term.is_word else ()
            corrected.append(replace(term, corrections=corrections) if corrections else term)
        return tuple(corrected)

    def _corrections(self, corpus: Corpus, term: Term, rules: Fuzzy) -> tuple[str, ...]:
        word = term.key
        max_distance = rules.max_distance(word)
        if max_distance == 0:
            return ()
        vocabulary = corpus.vocabulary_candidates(
            len(word) - max_distance, len(word) + max_distance, rules.max_candidates
        )
        cached = self._cache.get(word)
        if cached is not None and cached[0] is vocabulary:
            self._cache.move_to_end(word)
            return cached[1]
        if corpus.known_words([word]):
            result: tuple[str, ...] = ()  # an indexed word is no typo
        else:
            # The corpus hands out at most max_candidates words, most frequent first.
            result = closest(word, vocabulary, max_distance, rules.max_corrections)
        self._remember(word, vocabulary, result)
        return result

    def _remember(self, word: str, snapshot: object, result: tuple[str, ...]) -> None:
        self._cache[word] = (snapshot, result)
        self._cache.move_to_end(word)
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
