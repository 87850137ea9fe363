"""Words and stems as the search core makes them (unicode61-like word parts, Porter stems), for
memory's relevance. Kept apart and light: hooks stem every prompt, and importing the search core
itself would load its rule views."""

from __future__ import annotations

from capy.packregex import pack_regex

# Letters and digits, `_` separating: how capy.retrieval.query splits words (WORD_PART).
WORD_PART_PATTERN = r"[^\W_]+"
# Stems kept per process (a server stems many prompts); past this the memo starts again.
_MEMO_SIZE = 4096
_memo: dict[str, str] = {}


def _stem(word: str) -> str:
    stem = _memo.get(word)
    if stem is None:
        from capy.retrieval.porter import porter_stem

        if len(_memo) >= _MEMO_SIZE:
            _memo.clear()
        stem = _memo[word] = porter_stem(word)
    return stem


def stems(text: str) -> set[str]:
    """The distinct Porter stems of `text`'s words of two characters or more."""
    return set(stem_sequence(text))


def stem_sequence(text: str) -> list[str]:
    """The Porter stems of `text`'s words of two characters or more, in order."""
    words = pack_regex(WORD_PART_PATTERN).findall(text)
    return [_stem(word.lower()) for word in words if len(word) >= 2]


def stem_pairs(text: str, stopwords: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Adjacent stems of `text` (neither a stopword), as "first second": a phrase in the text."""
    return pairs_of(stem_sequence(text), stopwords)


def pairs_of(sequence: list[str], stopwords: set[str] | frozenset[str]) -> set[str]:
    """`stem_pairs` of a `stem_sequence` (a hook tokenises its prompt once for both)."""
    # By index, not itertools.pairwise: a UserPromptSubmit hook pays for loading itertools.
    pairs = ((sequence[index - 1], sequence[index]) for index in range(1, len(sequence)))
    return {
        f"{first} {second}"
        for first, second in pairs
        if first not in stopwords and second not in stopwords and first != second
    }


def __getattr__(name: str):
    """`WORD_PART`, the compiled pattern, made on first use: a hook that imports this module
    must not import `re` with it (capy.packregex)."""
    if name == "WORD_PART":
        return pack_regex(WORD_PART_PATTERN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
