"""The `vocabulary` table: indexed word forms and how often they occur, for fuzzy correction.

Frequencies count occurrences in chunk titles and contents. The indexer adds a source's counts
when its chunks go in and subtracts them when they come out, in the same transaction, so the
table always matches the chunks that readers can see.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

import sqlcipher3

# Word tokens as unicode61 splits them: unicode letters and digits, 3 to 40 of them; `_` separates,
# so `max_chunk_bytes` counts as three words and a typo in one part of an identifier can be
# corrected. Shorter words are not worth correcting and longer ones are hashes, base64 and
# other noise nobody types. The look-arounds skip a longer word whole instead of counting
# pieces of it; matching only what is kept lets Counter consume findall's list in C, several
# times faster than filtering.
MIN_TERM_CHARS = 3
MAX_TERM_CHARS = 40
_TERM = re.compile(rf"(?<![^\W_])[^\W_]{{{MIN_TERM_CHARS},{MAX_TERM_CHARS}}}(?![^\W_])")


def term_counts(texts: Iterable[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_TERM.findall(text.lower()))
    return counts


def apply_term_delta(
    conn: sqlcipher3.Connection, added: Counter[str], removed: Counter[str]
) -> None:
    """Add `added` and subtract `removed` in one pass; terms that reach zero are dropped."""
    delta = Counter(added)
    delta.subtract(removed)
    # Sorted: B-tree inserts in key order touch each page once instead of at random.
    increases = sorted((term, count) for term, count in delta.items() if count > 0)
    decreases = sorted(
        ((-count, term) for term, count in delta.items() if count < 0), key=lambda pair: pair[1]
    )
    if increases:
        conn.executemany(
            "INSERT INTO vocabulary (term, frequency) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET frequency = frequency + excluded.frequency",
            increases,
        )
    if decreases:
        # max(): never negative, even if the table drifted (a crash before this table existed).
        conn.executemany(
            "UPDATE vocabulary SET frequency = max(frequency - ?, 0) WHERE term = ?", decreases
        )
        conn.executemany(
            "DELETE FROM vocabulary WHERE term = ? AND frequency = 0",
            [(term,) for _, term in decreases],
        )


def known_words(conn: sqlcipher3.Connection, words: Iterable[str]) -> set[str]:
    """Which of these lowercase words the vocabulary holds (one primary-key probe each)."""
    wanted = sorted({word for word in words if MIN_TERM_CHARS <= len(word) <= MAX_TERM_CHARS})
    if not wanted:
        return set()
    rows = conn.execute(
        f"SELECT term FROM vocabulary WHERE term IN ({', '.join('?' * len(wanted))})", wanted
    )
    return {row[0] for row in rows}
