"""The terms of an intent that name one specific thing, and whether the output holds any.

"Is docker installed" on a package list meets `installed` on many lines, so the relevance
floor finds a good share of its words and the reply showed 2 KB of other packages. What tells
its answer apart is `docker`, and no line holds it. A term is specific when it is an
identifier (the search pack's entity rules), a number, a string the intent quotes, or a word
outside general English (the search pack's `intents.specific`). General English is read from
a corpus statistic shipped with capy rather than from a list kept for this purpose: the
whole-word entries of the bundled embedding model's WordPiece vocabulary, which was chosen by
frequency over English Wikipedia and books. `webhook`, `lodash` and `nginx` are not in it;
`installed`, `license` and `slowest` (as `slow`) are.

When every specific term of an intent is absent from the output (not as a stem, a word form,
a synonym or a substring either), nothing in the output can answer it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval.query import Term
    from capy.rules import RuleSet
    from capy.rules.views.search import SearchPack

# Word parts shorter than this (`kB`, `D` in "ranked D or worse", `ms`) are units, grades and
# letters: too short to name one thing.
_MIN_PART_CHARS = 3


@dataclass(frozen=True)
class SpecificAbsence:
    """What the output lacks of an intent's specific terms."""

    missing: list[str]  # the specific terms no chunk holds, in order
    verdict: bool  # all of them missing, on a question about them: the answer is absent


def specific_absence(chunks: Sequence[str], query: str, rules: RuleSet) -> SpecificAbsence:
    """Which specific terms of `query` (see the module doc) the output's `chunks` never hold,
    and whether that settles it: every specific term missing, on a question with no more than
    the pack's `max_context_words` besides them and its framing words."""
    from capy.api.intent_absent import held_terms
    from capy.api.intent_shape import stems_of
    from capy.retrieval.matching import stem
    from capy.retrieval.query import parse_query

    search = rules.view("search")
    terms = parse_query(query, search).terms
    specific = [term for term in terms if is_specific(term, query, search)]
    if not specific:
        return SpecificAbsence([], verdict=False)
    held = held_terms(chunks, specific)
    missing = [term.text for term, found in zip(specific, held, strict=True) if not found]
    framing = stems_of(search.intents.framing.words)
    context = [term for term in terms if term not in specific and stem(term.key) not in framing]
    short = len(context) <= search.intents.specific.max_context_words
    return SpecificAbsence(missing, verdict=short and len(missing) == len(specific))


def is_specific(term: Term, query: str, search: SearchPack) -> bool:
    """Whether `term` (of `query`) names one thing: an identifier, a number, a quoted string,
    or a word with a part that general English does not hold."""
    from capy.retrieval.query import WORD_PART

    if search.entities.is_entity(term.text) or any(ch.isdigit() for ch in term.text):
        return True
    if term.phrase and f'"{term.text.lower()}"' in query.lower():
        return True
    specific = search.intents.specific
    if specific.vocabulary_model is None:
        return False
    stems = general_stems(specific.vocabulary_model)
    if not stems:  # no vocabulary to tell general words by: shapes alone decide
        return False
    return any(
        not _is_general(part.lower(), stems, specific.endings)
        for part in WORD_PART.findall(term.text)
        if len(part) >= _MIN_PART_CHARS
    )


def _is_general(word: str, stems: frozenset[str], endings: tuple[tuple[str, str], ...]) -> bool:
    from capy.retrieval.porter import porter_stem

    if word in stems or porter_stem(word) in stems:
        return True
    for ending, base in endings:
        if word.endswith(ending) and len(word) - len(ending) >= _MIN_PART_CHARS:
            root = word[: -len(ending)] + base
            if root in stems or porter_stem(root) in stems:
                return True
    return False


@lru_cache(maxsize=2)
def general_stems(model_name: str) -> frozenset[str]:
    """The whole words of the model's tokenizer vocabulary (letters only, no `##` pieces),
    with their porter stems; empty when the bundled model has no tokenizer file."""
    from importlib.resources import files

    from capy.retrieval.porter import porter_stem

    path = files("capy") / "_data" / "models" / model_name / "tokenizer.json"
    try:
        vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    words = {word for word in vocab if word.isascii() and word.isalpha()}
    return frozenset(words | {porter_stem(word) for word in words})
