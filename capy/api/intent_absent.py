"""Names an intent asks about that the output never holds: a sure sign the answer is absent.

The relevance floor weighs an intent's words by their rarity in the output, so a question
like "does any file use console.log" on a lint report still scores well on `file`, and got
4 KB of sections about files. When a word of the intent is an identifier (the search pack's
entity rules: `console.log`, `zip_longest`, `setup.py`) and no chunk of the output holds it,
even as a synonym, a stem or a substring, nothing in the output can answer the intent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval.query import Term
    from capy.rules import RuleSet


def absent_names(
    chunks: Sequence[str], query: str, rules: RuleSet, *, also: Sequence[str] = ()
) -> list[str]:
    """The identifier-shaped terms of `query` that no chunk of the output holds, nor any of
    the texts `also` (the output as printed, the command that ran), in order."""
    from capy.retrieval.query import parse_query

    search = rules.view("search")
    terms = [t for t in parse_query(query, search).terms if search.entities.is_entity(t.text)]
    if not terms:
        return []
    held = held_terms(chunks, terms)
    missing = [term for term, found in zip(terms, held, strict=True) if not found]
    if missing and also:
        missing = [
            term
            for term, found in zip(missing, held_terms(also, missing), strict=True)
            if not found
        ]
    return [term.text for term in missing]


def held_terms(chunks: Sequence[str], terms: Sequence[Term]) -> list[bool]:
    """Per term, whether any chunk holds it (as matched everywhere: a stem, a word form, a
    synonym or a substring); stops reading chunks once every term is found."""
    from capy.retrieval.matching import compile_terms, term_spans

    patterns = compile_terms(tuple(terms))
    held = [False] * len(patterns)
    for chunk in chunks:
        for index, spans in enumerate(term_spans(chunk, patterns)):
            held[index] = held[index] or bool(spans)
        if all(held):
            break
    return held


def unmet_failure_kinds(
    stored: str, problems: Sequence[str], intent: str, rules: RuleSet
) -> list[str]:
    """The kinds of failure the intent asks about (`failure_kinds`: "*parsing* errors") when
    none of them is met, else []. A kind is met by a flagged line holding it as a word or as
    the head of a failure identifier (`SyntaxError` for "syntax errors"), or by the output
    holding it as a whole word anywhere (a name: "the test_cli errors"). A word that only
    shares a stem with part of an identifier (`parseOptions` for "parsing") does not meet it."""
    from capy.api.intent_shape import failure_kinds, intent_words, stems_of
    from capy.retrieval.matching import stem, words_of
    from capy.retrieval.query import WORD_PART

    kinds = failure_kinds(intent, rules)
    if not kinds:
        return []
    wanted = {stem(kind) for kind in kinds}
    failure = stems_of(rules.view("search").intents.failure.words)
    for line in problems:
        for word in WORD_PART.findall(line):
            if stem(word.lower()) in wanted:
                return []
            parts = [stem(part) for part in intent_words(word)]
            if len(parts) > 1 and parts[-1] in failure and wanted & set(parts[:-1]):
                return []
    everywhere = set(words_of(stored))
    return [] if any(kind in everywhere for kind in kinds) else kinds
