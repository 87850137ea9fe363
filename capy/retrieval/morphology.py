"""Word forms a query term also matches beyond what porter folds, from the search pack.

Porter folds inflections ("merged" and "merge", "complexity" and "complex") but not the ways
developers build words: "timing out" never meets `timeout`, "case-sensitive" never meets
`case_insensitive`, `maxRetries` never meets "max retries", "used" never meets "Unused". The
pack's `morphology` section holds the data; this module turns it into extra forms of a term,
OR-ed with the term wherever it is matched (the porter list, line selection, snippets, the
relevance floor), so a search and the lines shown for it agree:

- identifiers split at `-`, `_` and camelCase humps match their parts joined into one word
  (`casesensitive` is how unicode61 stores `caseSensitive`) and, for camelCase, as a phrase;
- a word with an ending a negation prefix takes ("-ive", "-ed") also matches its negated form,
  on the last part of an identifier too (in a long query only where the term must match: an
  AND pass, the lines shown; not as a phrase of its own in an OR pass);
- a listed compound matches its parts as a phrase ("timeout": "time out", which porter then
  folds to meet "timed out" and "timing out"), and adjacent query words whose stems are a
  compound's parts become one term that also matches the joined word.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from capy.retrieval.matching import stem  # cached: a search stems the same words again
from capy.retrieval.porter import porter_stem
from capy.retrieval.query import Term

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from capy.rules.views.search import Morphology, Negation, SearchPack

# An identifier the forms apply to: letters and digits, parts joined by `-` or `_`. Paths,
# dotted names and versions are left as they are.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[-_]+[A-Za-z0-9]+)*")
_SEPARATORS = re.compile(r"[-_]+")
# A camelCase hump: lower or digit before upper (maxRetries), or an acronym before a word
# (HTTPError).
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def join_compounds(
    candidates: list[tuple[Term, bool]], rules: SearchPack
) -> list[tuple[Term, bool]]:
    """Adjacent plain query words whose stems are a listed compound's parts, as one phrase
    term that also matches the joined word (and the joined word's synonyms). Runs before
    stopwords are dropped: "log in" is a compound although "in" is a stopword."""
    morphology = rules.morphology
    if morphology is None or not morphology.compounds:
        return candidates
    by_parts, longest = _compounds_by_parts(morphology.compounds)
    joined: list[tuple[Term, bool]] = []
    at = 0
    while at < len(candidates):
        for size in range(min(longest, len(candidates) - at), 1, -1):
            window = [term for term, _ in candidates[at : at + size]]
            if not all(term.is_word for term in window):
                continue
            compound = by_parts.get(tuple(stem(term.key) for term in window))
            if compound is not None:
                text = " ".join(term.text for term in window)
                merged = Term(
                    text, phrase=True, forms=(compound,), synonyms=rules.synonyms.expand(compound)
                )
                joined.append((merged, False))
                at += size
                break
        else:
            joined.append(candidates[at])
            at += 1
    return joined


def with_word_forms(term: Term, rules: SearchPack, *, of: int) -> Term:
    """`term`, one of `of` query terms, with the forms the pack adds to it (none for a quoted
    phrase). A negated form is a plain form of a short query; in a longer one it only widens
    the term where the term must match (see the pack's `negation.or_max_terms`)."""
    morphology = rules.morphology
    if morphology is None or term.phrase or not _IDENTIFIER.fullmatch(term.text):
        return term
    pieces = _SEPARATORS.split(term.text)
    parts = [part for piece in pieces for part in _HUMP.sub(" ", piece).split()]
    forms = _new(_forms(pieces, parts, morphology), term)
    negations = _new(_negated_forms(parts, morphology.negation), term)
    if of <= morphology.negation.or_max_terms:
        forms, negations = forms + negations, ()
    return replace(term, forms=forms, negations=negations) if forms or negations else term


def _new(forms: Iterator[str], term: Term) -> tuple[str, ...]:
    return tuple(form for form in dict.fromkeys(forms) if form != term.key)


def _forms(pieces: list[str], parts: list[str], morphology: Morphology) -> Iterator[str]:
    if morphology.split_identifiers and len(parts) > 1:
        yield "".join(parts).lower()
        if len(parts) > len(pieces):  # camelCase: the parts as words
            yield " ".join(parts).lower()
    if len(parts) == 1:
        split = _compounds_by_joined(morphology.compounds).get(stem(parts[0].lower()))
        if split is not None:
            yield split


def _negated_forms(parts: list[str], negation: Negation) -> Iterator[str]:
    """The negated forms of the term's last part, with the parts before it written apart and
    joined ("case insensitive", "caseinsensitive")."""
    head, last = [part.lower() for part in parts[:-1]], parts[-1].lower()
    # "non-blocking" is negated already: its joined form is the one to add.
    if head and head[-1] in {rule.prefix for rule in negation.prefixes}:
        return
    for negated in _negations(last, negation):
        yield " ".join([*head, negated])
        if head:
            yield "".join([*head, negated])


def _negations(word: str, negation: Negation) -> Iterator[str]:
    for rule in negation.prefixes:
        if rule.applies_to(word, negation.min_base_chars):
            yield rule.prefix + word
            if rule.written_apart:
                yield f"{rule.prefix} {word}"


@lru_cache(maxsize=8)
def _compounds_by_parts(compounds: tuple[str, ...]) -> tuple[dict[tuple[str, ...], str], int]:
    """Stems of the parts -> the joined word, and the most parts any compound has."""
    table = {tuple(porter_stem(p) for p in c.split()): c.replace(" ", "") for c in compounds}
    return table, max((len(parts) for parts in table), default=0)


@lru_cache(maxsize=8)
def _compounds_by_joined(compounds: tuple[str, ...]) -> dict[str, str]:
    """Stem of the joined word -> the parts as a phrase."""
    return {porter_stem(compound.replace(" ", "")): compound for compound in compounds}
