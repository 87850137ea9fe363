"""The `vocabulary` table: indexed word forms and how often they occur, for fuzzy correction.

Frequencies count occurrences in chunk titles and contents. The indexer adds a source's counts
when its chunks go in and subtracts them when they come out, in the same transaction, so the
table always matches the chunks that readers can see.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import sqlcipher3

# Word tokens as unicode61 splits them: unicode letters and digits; `_` separates, so
# `max_chunk_bytes` counts as three words and a typo in one part of an identifier can be
# corrected. Only words of 3 to 40 of them are kept: shorter words are not worth correcting and
# longer ones are hashes, base64 and other noise nobody types. Every word is counted (Counter
# consumes findall's list in C) and the lengths are filtered once per distinct word: on real
# text a fifth less time than a pattern that matches only the kept lengths, whose look-arounds
# run at every position.
MIN_TERM_CHARS = 3
MAX_TERM_CHARS = 40
_WORD = re.compile(r"[^\W_]+")


def term_counts(texts: Iterable[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_WORD.findall(text.lower()))
    return Counter(
        {word: n for word, n in counts.items() if MIN_TERM_CHARS <= len(word) <= MAX_TERM_CHARS}
    )


_ADD = (
    "INSERT INTO vocabulary (term, frequency) VALUES (?, ?) "
    "ON CONFLICT (term) DO UPDATE SET frequency = frequency + excluded.frequency"
)
# max(): never negative, even if the table drifted (a crash before this table existed).
_SUBTRACT = "UPDATE vocabulary SET frequency = max(frequency - ?, 0) WHERE term = ?"
_DROP = "DELETE FROM vocabulary WHERE term = ? AND frequency = 0"
# The same three as single statements over a JSON array of [term, count] pairs (see
# `TermDelta.apply_as_json`). `WHERE true`: an upsert's SELECT needs a WHERE clause to parse.
_ADD_JSON = (
    "INSERT INTO vocabulary (term, frequency) SELECT value ->> 0, value ->> 1 "
    "FROM json_each(?) WHERE true "
    "ON CONFLICT (term) DO UPDATE SET frequency = frequency + excluded.frequency"
)
_SUBTRACT_JSON = (
    "UPDATE vocabulary SET frequency = max(frequency - pair.value ->> 1, 0) "
    "FROM json_each(?) AS pair WHERE vocabulary.term = pair.value ->> 0"
)
_DROP_JSON = (
    "DELETE FROM vocabulary WHERE frequency = 0 AND term IN (SELECT value ->> 0 FROM json_each(?))"
)


@dataclass(frozen=True)
class TermDelta:
    """Counts to add and to subtract, each as (term, count) pairs sorted by term: B-tree
    inserts in key order touch each page once instead of at random."""

    increases: list[tuple[str, int]]
    decreases: list[tuple[str, int]]

    @classmethod
    def of(cls, added: Counter[str], removed: Counter[str]) -> TermDelta:
        delta = Counter(added)
        delta.subtract(removed)
        return cls(
            sorted((term, count) for term, count in delta.items() if count > 0),
            sorted((term, -count) for term, count in delta.items() if count < 0),
        )

    def apply(self, conn: sqlcipher3.Connection) -> None:
        if self.increases:
            conn.executemany(_ADD, self.increases)
        if self.decreases:
            conn.executemany(_SUBTRACT, [(count, term) for term, count in self.decreases])
            conn.executemany(_DROP, [(term,) for term, _ in self.decreases])

    def apply_as_json(self, conn: sqlcipher3.Connection) -> None:
        """`apply` in at most three statements, for a writer thread: SQLite steps each with
        the GIL released from start to end, where `executemany` takes it back for every row."""
        if self.increases:
            conn.execute(_ADD_JSON, (json.dumps(self.increases),))
        if self.decreases:
            decreases = json.dumps(self.decreases)
            conn.execute(_SUBTRACT_JSON, (decreases,))
            conn.execute(_DROP_JSON, (decreases,))


def apply_term_delta(
    conn: sqlcipher3.Connection, added: Counter[str], removed: Counter[str]
) -> None:
    """Add `added` and subtract `removed` in one pass; terms that reach zero are dropped."""
    TermDelta.of(added, removed).apply(conn)


def known_words(conn: sqlcipher3.Connection, words: Iterable[str]) -> set[str]:
    """Which of these lowercase words the vocabulary holds (one primary-key probe each)."""
    wanted = sorted({word for word in words if MIN_TERM_CHARS <= len(word) <= MAX_TERM_CHARS})
    if not wanted:
        return set()
    rows = conn.execute(
        f"SELECT term FROM vocabulary WHERE term IN ({', '.join('?' * len(wanted))})", wanted
    )
    return {row[0] for row in rows}
