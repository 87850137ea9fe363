"""Typed view of the search pack's `intents` section: what kind of answer an intent asks for.

Two shapes change how an intent reply is built: an intent about errors and failures (only
then does the reply list the errors an output reports), and a comparison (a superlative such
as "slowest" or a threshold such as "over 500 ms"), answered by sorting or filtering the
output's records on the numeric field the intent names.
"""

from __future__ import annotations

from enum import StrEnum

from capy.rules.views.base import Field, Section


class Order(StrEnum):
    DESC = "desc"
    ASC = "asc"


class Operator(StrEnum):
    GT = "gt"
    LT = "lt"


class FailureIntent(Section):
    words: tuple[str, ...] = ()
    # Words right before a failure word that name its kind ("*parsing* errors"); 0: none.
    qualifier_reach: int = 0


class DateIntent(Section):
    months: tuple[tuple[str, ...], ...] = ()
    max_lines: int = 8


class TallyIntent(Section):
    words: tuple[str, ...] = ()
    max_bytes: int = 600


class FramingWords(Section):
    words: tuple[str, ...] = ()


class SpecificTerms(Section):
    # The embedding model (by its name under capy's bundled models) whose tokenizer's
    # whole-word entries stand for general English; None: only shapes mark a term specific.
    vocabulary_model: str | None = None
    # Endings a general word may take beyond the porter stemmer's (`slowest` is `slow`), each
    # with the letters it replaces (`windiest` is `windy`).
    endings: tuple[tuple[str, str], ...] = ()
    # A question with more words than this besides its specific terms and framing carries its
    # own context, which may find the answer where the output names the thing otherwise.
    max_context_words: int = 2
    # Words of developer English a general-English vocabulary lacks: general, never specific.
    developer_words: tuple[str, ...] = ()
    # Words after which a number counts or places (`last 10`, `line 42`) rather than names.
    position_words: tuple[str, ...] = ()


class Superlative(Section):
    words: tuple[str, ...]
    order: Order
    # Header words the superlative implies when the intent names no field ("hottest": temp, max).
    fields: tuple[str, ...] = ()


class Threshold(Section):
    words: tuple[str, ...]
    op: Operator


class Compare(Section):
    superlatives: tuple[Superlative, ...] = ()
    thresholds: tuple[Threshold, ...] = ()
    # Groups of words that name the same field: an intent word finds a header holding another.
    field_aliases: tuple[tuple[str, ...], ...] = ()
    # Rows whose first cell is one of these sum the others up and never rank.
    summary_rows: tuple[str, ...] = ()
    # Regexes matching the first line of a multi-line record (`commit <hash>`).
    record_starts: tuple[str, ...] = ()
    # Findings compared by a number in their message: the line naming their file (above,
    # indented findings only), the line saying where each is (right after), and how far the
    # number may sit from the word naming it.
    message_heading: str | None = None
    message_location: str | None = None
    message_gap_chars: int = 40
    # Words making a superlative one of how often ("most *often*", "most *common*"): the
    # answer is the message printed most times (`capy.api.intent_compare_frequency`).
    frequency: tuple[str, ...] = ()
    # A headerless listing whose rows are more than this share one message (numbers masked)
    # is a repeated finding, not a table with a measure (`capy.api.intent_compare_listing`).
    repeated_message_share: float = 0.5
    top_rows: int = 5
    min_rows: int = 3
    max_row_bytes: int = 400
    # Unit (lowercase) -> what it multiplies the number before it by when rows are compared.
    units: dict[str, float] = Field(default_factory=dict)


class Intents(Section):
    failure: FailureIntent = FailureIntent()
    tally: TallyIntent = TallyIntent()
    framing: FramingWords = FramingWords()
    specific: SpecificTerms = SpecificTerms()
    dates: DateIntent = DateIntent()
    compare: Compare = Compare()
