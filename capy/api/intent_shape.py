"""What kind of answer an intent asks for, read off its words by the search pack's `intents`.

Words are compared by porter stem (`failing` meets `fail`), the same stemmer the search core
matches with, so the pack lists a word once, not each of its forms.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules import RuleSet

# Words, with identifiers split at their humps: `NullPointerException` holds `exception`,
# `TypeError` holds `error`.
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def intent_words(intent: str) -> list[str]:
    """The intent's words, lower-cased, in order."""
    return [word.lower() for word in _WORD.findall(intent)]


def intent_stems(intent: str) -> list[str]:
    """The intent's words, lower-cased and stemmed, in order."""
    from capy.retrieval.matching import stem

    return [stem(word) for word in intent_words(intent)]


def is_failure_intent(intent: str, rules: RuleSet) -> bool:
    """Whether the intent asks about errors or failures (a word of the pack's failure list)."""
    wanted = _stems(rules.view("search").intents.failure.words)
    return any(word in wanted for word in intent_stems(intent))


def failure_kinds(intent: str, rules: RuleSet) -> list[str]:
    """The words naming the kind of failure a failure intent asks about: those within the
    pack's `qualifier_reach` right before a failure word ("*parsing* errors"), less the words
    that only frame, count or ask (stopwords, framing, tally and failure words) and numbers."""
    from capy.retrieval.matching import stem

    intents = rules.view("search").intents
    reach = intents.failure.qualifier_reach
    failure = _stems(intents.failure.words)
    plain = _stems(intents.framing.words) | _stems(intents.tally.words) | failure
    stopwords = rules.view("search").stopwords.all
    words = intent_words(intent)
    kinds: list[str] = []
    for at, word in enumerate(words):
        if stem(word) not in failure:
            continue
        for before in words[max(0, at - reach) : at]:
            if before.isdigit() or before in stopwords or stem(before) in plain:
                continue
            if before not in kinds:
                kinds.append(before)
    return kinds


@lru_cache(maxsize=64)
def _stems(words: tuple[str, ...]) -> frozenset[str]:
    from capy.retrieval.matching import stem

    return frozenset(stem(word) for word in words)


def stems_of(words: tuple[str, ...]) -> frozenset[str]:
    """The stems of a pack word list, cached per list."""
    return _stems(words)
