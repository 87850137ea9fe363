"""The terms of an intent that name one specific thing, and whether the output holds any.

"Is docker installed" on a package list meets `installed` on many lines, so the relevance
floor finds a good share of its words and the reply showed 2 KB of other packages. What tells
its answer apart is `docker`, and no line holds it. A term is specific when it is an
identifier (the search pack's entity rules, or `__version__`), a number, a string the intent
quotes, or a word outside general English (the search pack's `intents.specific`). General
English is read from a corpus statistic shipped with capy rather than from a list kept for
this purpose: the whole-word entries of the bundled embedding model's WordPiece vocabulary,
which was chosen by frequency over English Wikipedia and books. `webhook`, `lodash` and
`nginx` are not in it; `installed`, `license` and `slowest` (as `slow`) are.

Developer English is not general English: an abbreviation (`repos`, `deps`, `env`), a format
or stream (`json`, `stderr`) or a single run of letters and digits (`k8s`, `sha256`, `5xx`) asks
about a kind of thing, not one thing, and the output may answer it in other words. A number
is a value to find unless it counts or places ("the last 10 commits", "line 42").

When every specific term of an intent is absent from the output (not as a stem, a word form,
a synonym or a substring either; a number with its `,`/`_` separators dropped on both sides),
nothing in the output can answer it. "The output" is what the program printed, read in
memory (the stored copy is redacted, and cut in the middle above the size cap), and the
command that ran: `npm outdated` need not print `npm` to be about it. A compound the agent
joins with hyphens ("the *newer-than-msrv* warnings") is held when the output holds each of its
specific words (`msrv`): its general words describe, and the output words them its own way.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.retrieval.query import Term
    from capy.rules import RuleSet
    from capy.rules.views.intents import SpecificTerms
    from capy.rules.views.search import SearchPack

# Word parts shorter than this (`kB`, `D` in "ranked D or worse", `ms`) are units, grades and
# letters: too short to name one thing.
_MIN_PART_CHARS = 3


# A number used as a value: digits with separators, and a unit or a `-bit` after them
# (`1234`, `1,234`, `1.25`, `v2.3`, `1024-bit`, `500ms`); not `5xx` (digits left open) nor `k8s`.
_NUMBER = re.compile(r"v?\d+(?:[.,_:]\d+)*(?:-?(?!x+$)[a-z]+|%)?", re.IGNORECASE)
_JOINED = re.compile(r"\w[-./:]\w")
_DIGIT_SEPARATOR = re.compile(r"(?<=\d)[,_](?=\d)")


@dataclass(frozen=True)
class SpecificAbsence:
    """What the output lacks of an intent's specific terms."""

    missing: list[str]  # the specific terms no chunk holds, in order
    verdict: bool  # all of them missing, on a question about them: the answer is absent
    # The identifier-shaped terms of the intent (the search pack's entity rules: `console.log`,
    # `setup.py`) that neither the output nor the command holds: one is a sure sign on its own.
    names: list[str] = field(default_factory=list)


def specific_absence(
    chunks: Sequence[str], query: str, rules: RuleSet, *, also: Sequence[str] = ()
) -> SpecificAbsence:
    """Which specific terms of `query` (see the module doc) neither the output's `chunks` nor
    the texts `also` (the output as printed, the command that ran) hold, and whether that
    settles it: every specific term missing, on a question with no more than the pack's
    `max_context_words` besides them and its framing words."""
    from capy.api.intent_absent import held_anywhere
    from capy.api.intent_shape import stems_of
    from capy.retrieval.matching import stem
    from capy.retrieval.query import parse_query

    search = rules.view("search")
    terms = parse_query(query, search).terms
    as_written = _compounds_held(held_anywhere(chunks, also, terms), terms, chunks, also, search)
    as_written = _affixes_held(as_written, terms, (*chunks, *also), search)
    names = [
        term.text
        for term, found in zip(terms, as_written, strict=True)
        if not found and is_name(term.text, search)
    ]
    held = _with_numbers(as_written, terms, (*chunks, *also))
    if all(held):  # nothing is missing: no need to tell specific words from general ones
        return SpecificAbsence([], verdict=False, names=names)
    specific = [term for term in terms if is_specific(term, query, search)]
    if not specific:
        return SpecificAbsence([], verdict=False, names=names)
    missing = [
        term.text for term, found in zip(terms, held, strict=True) if term in specific and not found
    ]
    framing = stems_of(search.intents.framing.words)
    context = [term for term in terms if term not in specific and stem(term.key) not in framing]
    short = len(context) <= search.intents.specific.max_context_words
    return SpecificAbsence(missing, verdict=short and len(missing) == len(specific), names=names)


# Plain words joined by hyphens (`newer-than-msrv`, `up-to-date`, `eslint-plugin-compat`); not
# letters joined to digits (`worker-3`), which name one thing whole.
_HYPHENATED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")


def _compounds_held(
    held: list[bool],
    terms: Sequence[Term],
    chunks: Sequence[str],
    also: Sequence[str],
    search: SearchPack,
) -> list[bool]:
    """`held`, with a hyphenated compound no text holds whole counted as held when the texts
    hold each of its specific words (`msrv` of `newer-than-msrv`): its general words describe
    (see `compound_parts`). One with no specific word is no specific term to miss."""
    from capy.api.intent_absent import held_anywhere

    result = list(held)
    for index, (term, found) in enumerate(zip(terms, held, strict=True)):
        parts = compound_parts([term], search) if not found else [term]
        if parts == [term]:
            continue
        names = [part for part in parts if is_specific(part, part.text, search)]
        result[index] = bool(names) and all(held_anywhere(chunks, also, names))
    return result


# A word the output holds whole, at the start or end of a name the intent uses, at least this
# long: `torch` of `pytorch`, `tests` of `doctests`, `django` of `djangorestframework`. Shorter
# ends (`pack` of `webpack`, `hook` of `webhook`) are too often a word of their own by chance:
# `webpack` counted as held on a listing of node_modules that holds a folder `pack`.
_MIN_AFFIX_CHARS = 5


def _affixes_held(
    held: list[bool], terms: Sequence[Term], texts: Sequence[str], search: SearchPack
) -> list[bool]:
    """`held`, with a plain word no text holds counted as held when the texts hold, as a whole
    word, its start or its end (see `_MIN_AFFIX_CHARS`). The agent names a thing as people
    call it, the output as it is installed or printed: "which version of *pytorch*" on a
    package list that holds `torch`, "did the *doctests* pass" on doctest's "2 tests in 3
    items". Claiming the output never holds `pytorch` there is true to the letter and hides
    the answer, so such a word is no sign of absence. Identifiers keep their own rule."""
    ends = {
        index: _word_ends(term.text)
        for index, (term, found) in enumerate(zip(terms, held, strict=True))
        if not found and not term.phrase and not is_name(term.text, search)
    }
    ends = {index: parts for index, parts in ends.items() if parts}
    if not ends:
        return held
    wanted = {part for parts in ends.values() for part in parts}
    pattern = re.compile(
        r"(?<![^\W_])(?:" + "|".join(map(re.escape, sorted(wanted))) + r")(?![^\W_])",
        re.IGNORECASE,
    )
    seen: set[str] = set()
    for text in texts:
        seen.update(match.lower() for match in pattern.findall(text))
        if all(parts & seen for parts in ends.values()):
            break
    result = list(held)
    for index, parts in ends.items():
        result[index] = bool(parts & seen)
    return result


def _word_ends(word: str) -> set[str]:
    """The starts and ends of a plain word of letters at least `_MIN_AFFIX_CHARS` long,
    shorter than the word itself, in lower case."""
    if not word.isalpha():
        return set()
    lower = word.lower()
    sizes = range(_MIN_AFFIX_CHARS, len(lower))
    return {lower[:size] for size in sizes} | {lower[-size:] for size in sizes}


def compound_parts(terms: Sequence[Term], search: SearchPack) -> list[Term]:
    """`terms` with each hyphenated compound of plain words replaced by its words (stop words
    left out). The agent coins such a compound ("the *newer-than-msrv* warnings") to describe,
    and the output holds its words apart or in other forms ("current MSRV"): judged whole it is
    a term no chunk holds, which the verdict took for a missing specific term."""
    from capy.retrieval.query import Term

    parts: list[Term] = []
    for term in terms:
        if term.phrase or is_name(term.text, search) or not _HYPHENATED.fullmatch(term.text):
            parts.append(term)
            continue
        words = [word for word in term.text.split("-") if word.lower() not in search.stopwords.all]
        parts += [Term(word) for word in words if len(word) >= search.query.min_term_chars]
    return parts


def _with_numbers(held: list[bool], terms: Sequence[Term], texts: Sequence[str]) -> list[bool]:
    """`held`, with a number the texts hold with other digit separators counted as held."""
    return [
        found
        or (
            _NUMBER.fullmatch(term.text) is not None
            and any(_holds_number(t, term.text) for t in texts)
        )
        for found, term in zip(held, terms, strict=True)
    ]


def _holds_number(text: str, number: str) -> bool:
    digits = _DIGIT_SEPARATOR.sub("", number)
    pattern = rf"(?<![\w.]){re.escape(digits)}(?![\w]|\.\d)"
    return re.search(pattern, _DIGIT_SEPARATOR.sub("", text), re.IGNORECASE) is not None


def is_specific(term: Term, query: str, search: SearchPack) -> bool:
    """Whether `term` (of `query`) names one thing: an identifier, a number used as a value,
    a quoted string, or a word with a part that general English does not hold."""
    from capy.retrieval.query import WORD_PART

    if is_name(term.text, search):
        return True
    specific = search.intents.specific
    if _NUMBER.fullmatch(term.text):
        return not _counts_or_places(term.text, query, specific.position_words)
    if term.phrase and f'"{term.text.lower()}"' in query.lower():
        return True
    if any(ch.isdigit() for ch in term.text):
        # Joined parts name one thing (`Zürich-7`, `worker-3`); one run of letters and digits
        # abbreviates a kind (`k8s`, `ipv6`, `sha256`, `5xx`).
        return _JOINED.search(term.text) is not None
    if specific.vocabulary_model is None:
        return False
    vocabulary = general_vocabulary(specific.vocabulary_model)
    if not vocabulary.stems:  # no vocabulary to tell general words by: shapes alone decide
        return False
    return any(
        not _is_general(part.lower(), vocabulary, specific)
        for part in WORD_PART.findall(term.text)
        if len(part) >= _MIN_PART_CHARS
    )


def is_name(text: str, search: SearchPack) -> bool:
    """Whether `text` is shaped like an identifier: the search pack's entity rules, or a name
    with an underscore at its edge (`__version__`, `_scope`), which those rules leave to
    ranking as plain words but which names one thing as surely (capy.api.intent_absent)."""
    from capy.api.intent_absent import EDGE_UNDERSCORE

    return search.entities.is_entity(text) or EDGE_UNDERSCORE.search(text) is not None


def _counts_or_places(number: str, query: str, words: Sequence[str]) -> bool:
    if not words:
        return False
    before = "|".join(re.escape(word) for word in words)
    pattern = rf"\b(?:{before})\s+#?{re.escape(number.lower())}(?![\w.])"
    return re.search(pattern, query.lower()) is not None


def _is_general(word: str, vocabulary: _Vocabulary, specific: SpecificTerms) -> bool:
    from capy.retrieval.porter import porter_stem

    stems = vocabulary.stems
    if word in specific.developer_words or word in stems or porter_stem(word) in stems:
        return True
    for ending, base in specific.endings:
        if word.endswith(ending) and len(word) - len(ending) >= _MIN_PART_CHARS:
            root = word[: -len(ending)] + base
            if root in stems or porter_stem(root) in stems:
                return True
    singular = word[:-1] if word.endswith("s") and len(word) > _MIN_PART_CHARS else word
    return singular in specific.developer_words or vocabulary.begins_a_word(singular)


@dataclass(frozen=True)
class _Vocabulary:
    """General English: the whole words of a tokenizer vocabulary, sorted, and their stems."""

    words: tuple[str, ...]
    stems: frozenset[str]

    def begins_a_word(self, prefix: str) -> bool:
        """Whether `prefix` is the start of a longer word (`repo` of `repository`)."""
        index = bisect.bisect_right(self.words, prefix)
        return index < len(self.words) and self.words[index].startswith(prefix)


_GENERATED_HEADER = (
    "# Generated by `capy rules gen` from tokenizer.json: a word, and its porter stem when it"
    " differs.\n"
)


@lru_cache(maxsize=2)
def general_vocabulary(model_name: str) -> _Vocabulary:
    """The whole words of the model's tokenizer vocabulary (letters only, no `##` pieces),
    with their porter stems; empty when the bundled model has no tokenizer file. Read from
    the file `capy rules gen` writes beside the tokenizer (stemming 21,745 words took every
    process 0.3 s), else worked out from the tokenizer."""
    try:
        text = general_words_path(model_name).read_text(encoding="utf-8")
    except OSError:
        text = general_words_text(model_name)
    body = text.partition("\n")[2]  # the lines are sorted by word
    words = tuple(line.partition(" ")[0] for line in body.splitlines())
    return _Vocabulary(words, frozenset(body.split()))  # every word and every stem


def general_words_path(model_name: str) -> Path:
    """Where the generated word list of a bundled model is kept."""
    from importlib.resources import files

    return Path(str(files("capy") / "_data" / "models" / model_name / "general-words.txt"))


def general_words_text(model_name: str) -> str:
    """The generated word list of a bundled model (only its header when the model has no
    tokenizer file): one line per whole word, with its porter stem when that differs."""
    from importlib.resources import files

    from capy.retrieval.porter import porter_stem

    path = files("capy") / "_data" / "models" / model_name / "tokenizer.json"
    try:
        vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return _GENERATED_HEADER
    lines = [_GENERATED_HEADER]
    for word in sorted(word for word in vocab if word.isascii() and word.isalpha()):
        word_stem = porter_stem(word)
        lines.append(f"{word} {word_stem}\n" if word_stem != word else f"{word}\n")
    return "".join(lines)
