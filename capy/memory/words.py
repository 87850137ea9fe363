"""Words and stems as the search core makes them (unicode61-like word parts, Porter stems), for
memory's relevance. Kept apart and light: hooks stem every prompt, and importing the search core
itself would load its rule views."""

from __future__ import annotations

from capy.packregex import pack_regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

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


def synonym_table(groups: Iterable[tuple[str, ...]]) -> dict[str, str]:
    """Each term's stem (a two-word phrase's as "first+second") -> the stem of its group's first
    term (the memory pack's `synonyms`): what `folded` counts each as."""
    table: dict[str, str] = {}
    for terms in groups:
        first = "+".join(stem_sequence(terms[0]))
        for term in terms[1:]:
            table["+".join(stem_sequence(term))] = first
    return table


def folded(sequence: list[str], synonym: Callable[[str], str | None]) -> list[str]:
    """`sequence` (a `stem_sequence`) with each synonym as its group's first term (`synonym`
    looks a stem, or "first+second" for a two-word phrase, up in a `synonym_table`), so a
    prompt's "rerun" and "kick off" meet a record's "run"."""
    found: list[str] = []
    index = 0
    while index < len(sequence):
        if index + 1 < len(sequence):
            both = synonym(f"{sequence[index]}+{sequence[index + 1]}")
            if both:
                found.append(both)
                index += 2
                continue
        found.append(synonym(sequence[index]) or sequence[index])
        index += 1
    return found


def __getattr__(name: str):
    """`WORD_PART`, the compiled pattern, made on first use: a hook that imports this module
    must not import `re` with it (capy.packregex)."""
    if name == "WORD_PART":
        return pack_regex(WORD_PART_PATTERN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
