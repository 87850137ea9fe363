"""From what a person or agent typed to FTS5 queries that can never be a syntax error.

Every term reaches FTS5 as a quoted string (`"term"`, inner quotes doubled), so operators,
column filters and parentheses in user text are inert; the pack's operator words and syntax
characters are removed on top of that so that they do not become search terms either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace

from capy.rules.views.search import SearchPack

# A term must hold at least one letter or digit: the tokenizers drop everything else, and a
# quoted string with no token in it would be an empty phrase.
_HAS_WORD = re.compile(r"[^\W_]")
# Words as the vocabulary stores them (letters, digits, underscore), for synonyms and fuzzy.
_PLAIN_WORD = re.compile(r"\w+")
_PHRASE = re.compile(r'"([^"]*)"')
# A lone capital letter: a grade, a class or kind marker, a drive (the pack decides).
_SINGLE_CAPITAL = re.compile(r"[A-Z]")
# Word parts as the tokenizers split them: `_` and punctuation separate (the matcher finds
# query terms in chunks by the same words).
WORD_PART = re.compile(r"[^\W_]+")
# Sentence punctuation glued to the end of a word ("locked," "why?") is not part of it.
EDGE_PUNCTUATION = ".,;!?"
# Markdown emphasis, `_word_`: one underscore each side and none inside is how a person stresses
# a word ("which _private_ functions"), as `*word*` is (`*` is a syntax character). A dunder
# (`__init__`), a private name (`_helper`) or a snake_case one (`_a_b_`) keeps its underscores.
_EMPHASIS = re.compile(r"_([^\W_]+)_")


@dataclass(frozen=True)
class Term:
    """One query term: a word, an identifier or a quoted phrase, with what it may also match."""

    text: str  # as typed (case kept: entity boosts compare verbatim)
    phrase: bool = False  # a quoted phrase from the query
    synonyms: tuple[str, ...] = ()  # the pack's synonym group, OR-ed in the porter list
    forms: tuple[str, ...] = ()  # word forms the pack's morphology adds (capy.retrieval.morphology)
    # Negated forms ("unused" for "used") of a long query: for AND and for finding lines, not
    # OR-ed alone (a short query's negated forms are plain `forms`).
    negations: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()  # fuzzy corrections, OR-ed in both lists

    @property
    def key(self) -> str:
        return self.text.lower()

    @property
    def is_word(self) -> bool:
        """A single vocabulary-style word: the only kind synonyms and fuzzy correction apply to."""
        return not self.phrase and _PLAIN_WORD.fullmatch(self.text) is not None

    def porter_variants(self) -> tuple[str, ...]:
        return _unique((self.text, *self.forms, *self.negations, *self.corrections, *self.synonyms))

    def any_of_variants(self) -> tuple[str, ...]:
        """The variants an OR pass names, a long query's negated forms left out: on its own a
        negated form ranks the opposite concept ("incoherent" for "coherent" in a TREC topic),
        while inside an AND group the query's other words keep it on topic."""
        return _unique((self.text, *self.forms, *self.corrections, *self.synonyms))

    def trigram_variants(self, min_chars: int) -> tuple[str, ...]:
        """Synonyms stay out: as substrings, short forms such as "del" or "kube" match inside
        unrelated words."""
        variants = _unique((self.text, *self.corrections))
        return tuple(variant for variant in variants if len(variant) >= min_chars)

    @staticmethod
    def variant_words(variant: str, min_chars: int) -> tuple[str, ...]:
        """The words of one variant as the vocabulary counts them (lowercase letters and
        digits, `_` and punctuation separate), for asking whether they occur anywhere."""
        words = (word.lower() for word in WORD_PART.findall(variant))
        return tuple(dict.fromkeys(word for word in words if len(word) >= min_chars))

    @property
    def shown(self) -> str:
        """The term as it reads in a corrected query."""
        text = self.corrections[0] if self.corrections else self.text
        return f'"{text}"' if self.phrase else text


@dataclass(frozen=True)
class ParsedQuery:
    """A query's text and the terms parsed from it."""

    text: str
    terms: tuple[Term, ...]

    @property
    def empty(self) -> bool:
        return not self.terms

    def with_terms(self, terms: tuple[Term, ...]) -> ParsedQuery:
        return replace(self, terms=terms)

    @property
    def shown(self) -> str:
        return " ".join(term.shown for term in self.terms)


def parse_query(text: object, rules: SearchPack) -> ParsedQuery:
    """Clean, split and filter a query into terms; never raises, may return no terms."""
    cleaned = clean_text(text, rules.query.max_bytes)
    candidates: list[Term] = []
    position = 0
    for match in _PHRASE.finditer(cleaned):
        candidates += _loose_terms(cleaned[position : match.start()], rules)
        candidates += _phrase_terms(match.group(1), rules)
        position = match.end()
    candidates += _loose_terms(cleaned[position:], rules)
    from capy.retrieval.morphology import join_compounds, with_word_forms

    terms = _drop_stopwords(join_compounds(candidates, rules), rules)
    terms = _dedupe(terms)[: rules.query.max_terms]
    terms = [with_word_forms(_with_synonyms(term, rules), rules, of=len(terms)) for term in terms]
    return ParsedQuery(text=cleaned, terms=tuple(terms))


def clean_text(text: object, max_bytes: int) -> str:
    """A str of at most `max_bytes` UTF-8 bytes with control and format characters turned into
    spaces (lone surrogates, NULs and bidi controls included)."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = "" if text is None else str(text)
    clipped = text.encode("utf-8", "ignore")[: max(max_bytes, 0)].decode("utf-8", "ignore")
    return "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in clipped)


def _strip_syntax(text: str, rules: SearchPack) -> str:
    """Syntax characters become spaces, so "10:14" gives two terms instead of one "1014"."""
    return text.translate({ord(ch): " " for ch in rules.query.strip_chars})


def _loose_terms(text: str, rules: SearchPack) -> list[tuple[Term, bool]]:
    found = []
    for token in _strip_syntax(text, rules).split():
        token = _unstressed(token.strip(EDGE_PUNCTUATION))
        if token in rules.query.operator_words or not _usable(token, rules):
            continue
        found.append((Term(token), token.lower() in rules.stopwords.all))
    return found


def _unstressed(token: str) -> str:
    """The word inside markdown emphasis (`_private_` -> `private`), else the token."""
    emphasis = _EMPHASIS.fullmatch(token)
    return emphasis.group(1) if emphasis else token


def _phrase_terms(text: str, rules: SearchPack) -> list[tuple[Term, bool]]:
    """A quoted phrase stays one phrase (stopwords inside it kept); one word is a plain term."""
    words = _strip_syntax(text, rules).split()
    if len(words) == 1:
        return _loose_terms(words[0], rules)
    phrase = " ".join(words)
    if not words or not _usable(phrase, rules):
        return []
    return [(Term(phrase, phrase=True), False)]


def _usable(token: str, rules: SearchPack) -> bool:
    if rules.query.keep_single_capitals and _SINGLE_CAPITAL.fullmatch(token):
        return True
    return len(token) >= rules.query.min_term_chars and _HAS_WORD.search(token) is not None


def _drop_stopwords(candidates: list[tuple[Term, bool]], rules: SearchPack) -> list[Term]:
    """Stopwords go unless nothing else is left: "to be or not to be" still searches."""
    kept = [term for term, is_stopword in candidates if not is_stopword]
    return kept or [term for term, _ in candidates]


def _dedupe(terms: list[Term]) -> list[Term]:
    seen: set[str] = set()
    unique = []
    for term in terms:
        if term.key not in seen:
            seen.add(term.key)
            unique.append(term)
    return unique


def _with_synonyms(term: Term, rules: SearchPack) -> Term:
    if not term.is_word:
        return term
    return replace(term, synonyms=rules.synonyms.expand(term.key))


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    """Each value once, its first spelling kept (both tokenizers ignore case)."""
    seen: set[str] = set()
    unique = []
    for value in values:
        if value.lower() not in seen:
            seen.add(value.lower())
            unique.append(value)
    return tuple(unique)


# --- FTS5 query text -------------------------------------------------------------------------


def fts_quote(text: str) -> str:
    """An FTS5 string: inside double quotes every character is literal, `"` is written `""`."""
    return '"' + text.replace('"', '""') + '"'


def _group(variants: tuple[str, ...]) -> str:
    quoted = [fts_quote(variant) for variant in variants]
    return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def porter_query(terms: tuple[Term, ...], *, conjunction: str) -> str | None:
    """`conjunction` is "AND" (every term) or "OR" (any term); None when there is nothing."""
    if conjunction == "OR":
        return " OR ".join(porter_phrases(terms)) or None
    groups = [_group(term.porter_variants()) for term in terms]
    return f" {conjunction} ".join(groups) or None


def porter_phrases(terms: tuple[Term, ...]) -> tuple[str, ...]:
    """Every phrase of the terms' porter variants, quoted, each once: the OR query is these
    joined by OR (bm25 sums a phrase once per naming, so a variant two terms share, "error" in
    two synonym groups, is named once)."""
    return _unique(fts_quote(v) for term in terms for v in term.any_of_variants())


def trigram_query(terms: tuple[Term, ...], *, conjunction: str, min_chars: int) -> str | None:
    """Substring phrases for the trigram table. A term too short to form a trigram is left out,
    and an AND query that would lose a term to that is not run at all: it would be looser than
    the porter query it is fused with."""
    if conjunction == "OR":
        return " OR ".join(trigram_phrases(terms, min_chars=min_chars)) or None
    groups = []
    for term in terms:
        variants = term.trigram_variants(min_chars)
        if not variants:
            return None
        groups.append(_group(variants))
    return f" {conjunction} ".join(groups) or None


def trigram_phrases(terms: tuple[Term, ...], *, min_chars: int) -> tuple[str, ...]:
    """The phrases of a trigram OR query (terms too short for a trigram left out)."""
    return _unique(fts_quote(v) for term in terms for v in term.trigram_variants(min_chars))
