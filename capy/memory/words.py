"""Words and stems as the search core makes them (unicode61-like word parts, Porter stems), for
memory's relevance. Kept apart and light: hooks stem every prompt, and importing the search core
itself would load its rule views."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

# Letters and digits, `_` separating: how capy.retrieval.query splits words (WORD_PART).
WORD_PART = re.compile(r"[^\W_]+")


@lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    from capy.retrieval.porter import porter_stem

    return porter_stem(word)


def stems(text: str) -> set[str]:
    """The distinct Porter stems of `text`'s words of two characters or more."""
    return {_stem(word.lower()) for word in WORD_PART.findall(text) if len(word) >= 2}


def stem_pairs(text: str, stopwords: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Adjacent stems of `text` (neither a stopword), as "first second": a phrase in the text."""
    sequence = [_stem(word.lower()) for word in WORD_PART.findall(text) if len(word) >= 2]
    return {
        f"{first} {second}"
        for first, second in pairwise(sequence)
        if first not in stopwords and second not in stopwords and first != second
    }
