"""Whether the output holds an intent's terms; and failure kinds an intent asks about that
the output never shows. An identifier the intent names (the search pack's entity rules) that
the output never holds is a sure sign the answer is absent (capy.api.intent_specific).

The relevance floor weighs an intent's words by their rarity in the output, so a question
like "does any file use console.log" on a lint report still scores well on `file`, and got
4 KB of sections about files. When a word of the intent is an identifier (the search pack's
entity rules: `console.log`, `zip_longest`, `setup.py`) and no chunk of the output holds it,
even as a synonym, a stem or a substring, nothing in the output can answer the intent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval.query import Term
    from capy.rules import RuleSet

# Words split like unicode61, where `_` separates: `__version__` is matched as the word
# `version`, which `sys.version_info` holds. Its underscores are what make it that name (a
# dunder, a private `_helper`), so it is held only where the text holds it with them. Markdown
# emphasis (`_private_`) is no name and never reaches here: the query parser unwraps it.
EDGE_UNDERSCORE = re.compile(r"^_+[^\W_]|[^\W_]_+$")


def held_anywhere(chunks: Sequence[str], also: Sequence[str], terms: Sequence[Term]) -> list[bool]:
    """Per term, whether a chunk of the output holds it, else one of the texts `also` (the
    output as printed, the command that ran); `also` is read only for the terms still missing."""
    held = held_terms(chunks, terms)
    rest = [index for index, found in enumerate(held) if not found]
    if rest and also:
        for index, found in zip(rest, held_terms(also, [terms[i] for i in rest]), strict=True):
            held[index] = found
    return held


def held_terms(chunks: Sequence[str], terms: Sequence[Term]) -> list[bool]:
    """Per term, whether any chunk holds it (as matched everywhere: a stem, a word form, a
    synonym or a substring); stops reading chunks once every term is found. A name with an
    underscore at its edge is held only as written (see `EDGE_UNDERSCORE`)."""
    from capy.retrieval.matching import compile_terms, term_spans

    patterns = compile_terms(tuple(terms))
    as_written = [
        term.text.lower() if EDGE_UNDERSCORE.search(term.text) else None for term in terms
    ]
    held = [False] * len(patterns)
    for chunk in chunks:
        lower = chunk.lower() if any(as_written) else ""
        for index, spans in enumerate(term_spans(chunk, patterns)):
            written = as_written[index]
            found = written in lower if written is not None else bool(spans)
            held[index] = held[index] or found
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
