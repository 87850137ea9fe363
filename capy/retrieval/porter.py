"""Porter's stemmer (1980), the algorithm of SQLite's FTS5 `porter` tokenizer.

The porter table matches "merged" with "Merge", "branches" with "branch" and "complex" with
"complexity"; the code that finds where a hit's terms sit (line selection, snippets, boosts,
the relevance floor) has to fold words the same way, or the chunk the table found shows no
line for the very word that made it match. This is the reference algorithm as FTS5 runs it
(Martin Porter's C version: `bli` -> `ble` and `logi` -> `log` in step 2), on lowercase ASCII
words of three characters or more, as FTS5 leaves shorter tokens alone.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")
# FTS5 passes tokens shorter than this through unstemmed.
_MIN_CHARS = 3

# Each step's endings by the letter before the last, the longest first: the first ending a
# word has decides, whether or not its condition then holds (as in the reference code).
_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"),
    ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _by_penultimate(
    rules: tuple[tuple[str, str], ...],
) -> dict[str, tuple[tuple[str, str], ...]]:
    grouped: dict[str, list[tuple[str, str]]] = {}
    for ending, replacement in rules:
        grouped.setdefault(ending[-2], []).append((ending, replacement))
    return {key: tuple(sorted(v, key=lambda rule: -len(rule[0]))) for key, v in grouped.items()}


_STEP2_BY = _by_penultimate(_STEP2)
_STEP3_BY = _by_penultimate(_STEP3)
_STEP4_BY = _by_penultimate(tuple((ending, "") for ending in _STEP4))


def _consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-consonant runs the stem has."""
    runs, previous_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if previous_vowel and not vowel:
            runs += 1
        previous_vowel = vowel
    return runs


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(stem: str) -> bool:
    return len(stem) >= 2 and stem[-1] == stem[-2] and _consonant(stem, len(stem) - 1)


def _cvc(stem: str) -> bool:
    """Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "snow")."""
    n = len(stem)
    return (
        n >= 3
        and _consonant(stem, n - 1)
        and not _consonant(stem, n - 2)
        and _consonant(stem, n - 3)
        and stem[-1] not in "wxy"
    )


def porter_stem(word: str) -> str:
    """The Porter stem of a lowercase word (left as it is below three characters)."""
    if len(word) < _MIN_CHARS or not word.isascii():
        return word
    word = _step1a(word)
    word = _step1b(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _STEP2_BY, 0)
    word = _replace(word, _STEP3_BY, 0)
    word = _step4(word)
    return _step5(word)


def _step1a(word: str) -> str:
    # FTS5 takes "ies" and "eed" as endings only when something comes before them.
    if word.endswith("sses") or (word.endswith("ies") and len(word) > 3):
        return word[:-2]
    if word.endswith("ss"):
        return word
    return word[:-1] if word.endswith("s") else word


def _step1b(word: str) -> str:
    if word.endswith("eed") and len(word) > 3:
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for ending in ("ed", "ing"):
        if word.endswith(ending) and _has_vowel(word[: -len(ending)]):
            return _after_1b(word[: -len(ending)])
    return word


def _after_1b(stem: str) -> str:
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _double_consonant(stem) and stem[-1] not in "lsz":
        return stem[:-1]
    if _measure(stem) == 1 and _cvc(stem):
        return stem + "e"
    return stem


def _replace(word: str, rules: dict[str, tuple[tuple[str, str], ...]], above: int) -> str:
    if len(word) < 2:
        return word
    for ending, replacement in rules.get(word[-2], ()):
        if word.endswith(ending):
            stem = word[: -len(ending)]
            return stem + replacement if _measure(stem) > above else word
    return word


def _step4(word: str) -> str:
    if len(word) < 2:
        return word
    for ending, _ in _STEP4_BY.get(word[-2], ()):
        if word.endswith(ending):
            stem = word[: -len(ending)]
            if ending == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word
