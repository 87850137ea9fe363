"""The top of an OR query by bm25, without scoring every chunk it matches (MaxScore).

An OR query such as `noholu OR dictionary OR context` matches tens of thousands of chunks on
a large store through its common words, and FTS5 scores each match it is asked to rank.
bm25 adds one share per phrase, and a phrase's share stays below (k1 + 1) * idf however often
the phrase occurs (FTS5 fixes k1 = 1.2). So a chunk holding only common phrases scores below
the sum of their ceilings, and once the k-th best score among the chunks holding a rarer
phrase reaches that sum, no chunk of common phrases alone can enter the top k: it need not be
scored at all (Turtle and Flood, "Query evaluation: strategies and optimizations", 1995).

The chunks holding a rare ("essential") phrase are scored exactly in two statements, since
FTS5 sums every phrase a query names, once per naming: `E` scores them all by the rare
phrases, and `(E) AND (C)` scores again, by every phrase, those that also hold a common one.
When the ceiling is not reached, the chunks of common phrases alone (`(C) NOT (E)`) are ranked
within the window, as any list is, and merged: the rare-phrase chunks are ranked whatever
their age. A query whose phrases are all rare is ranked whole in one statement; one none of
whose phrases is rare, or whose matches all fit in the window, is left to the plain windowed
statement (None).

Phrase counts (the idf that FTS5 computes inside bm25) are cached per process until the index
changes: the FTS5 structure record changes with every write, so it keys the cache.
"""

from __future__ import annotations

import _thread  # threading's Lock itself, without the module a search does not otherwise need
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from capy.retrieval.model import WorkBudget
from capy.store.budget import fetch_within

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlcipher3

# FTS5's bm25 constant: a phrase's share is idf * f * (k1 + 1) / (f + k1 * norm) < idf * (k1 + 1).
_K1 = 1.2
# The data rows FTS5 keeps its row count and segment structure in (fts5Int.h).
_AVERAGES_ID = 1
_STRUCTURE_ID = 10
_CACHED_PHRASES = 4096
# Float sums in another order than FTS5's: a ceiling is compared with a little headroom.
_TOLERANCE = 1e-9

# (MATCH expression, window or None, limit or None) -> [(rowid, bm25)] best first, or None
# when the statement ran out of time.
Ranker = Callable[[str, int | None, int | None], list[tuple[int, float]] | None]
# (SQL, parameters) -> rows, or None when the statement ran out of time.
Fetch = Callable[[str, Sequence[object]], list[tuple] | None]


@dataclass
class _Counts:
    """Cached match counts of one vocabulary state."""

    structure: bytes | None = None
    by_phrase: OrderedDict[str, int] = field(default_factory=OrderedDict)


_counts: dict[tuple[str, str], _Counts] = {}
_counts_lock = _thread.allocate_lock()  # the server may search from several threads


def top_of_any(
    table: str,
    phrases: Sequence[str],
    limit: int,
    *,
    window: int | None,
    essential_rows: int,
    fetch: Fetch,
    rank: Ranker,
    database: str,
) -> list[tuple[int, float]] | None:
    """The best `limit` (rowid, bm25) of `phrases` OR-ed (each a quoted FTS5 string), or None
    when the plain windowed statement ranks as well: every match fits in the window, or no
    phrase is rare enough (`essential_rows`) to start from. [] when a statement ran out of
    time."""
    if essential_rows < 1:
        return None
    counts = phrase_counts(table, phrases, fetch=fetch, database=database)
    if counts is None:
        return []
    if len(counts) < 2 or (window is not None and sum(counts.values()) <= window):
        return None
    order = sorted(counts, key=counts.__getitem__)
    essential, rows = [], 0
    for phrase in order:
        if rows + counts[phrase] > essential_rows:
            break
        essential.append(phrase)
        rows += counts[phrase]
    common = order[len(essential) :]
    if not essential:
        return None
    if not common:  # every match is a rare-phrase match: all of them ranked, window or not
        return rank(_any(essential), None, limit)
    scored = _scored_exactly(essential, common, rank)
    if scored is None:
        return []
    best = sorted(scored.items(), key=_rank_order)
    threshold = -best[limit - 1][1] if len(best) >= limit else 0.0
    total = row_count(table, fetch)
    if total is None:
        return []
    ceiling = sum((_K1 + 1) * idf(total, counts[phrase]) for phrase in common)
    if ceiling * (1 + _TOLERANCE) <= threshold:
        return best[:limit]
    rest = rank(f"({_any(common)}) NOT ({_any(essential)})", window, limit)
    if rest is None:
        return []
    return sorted(best[:limit] + rest, key=_rank_order)[:limit]


def bm25_statement(
    table: str,
    weights: Sequence[float],
    expression: str,
    condition: tuple[str, Sequence[object]],
    window: int | None,
    most: int | None,
) -> tuple[str, list[object]]:
    """The statement (and its parameters) of a `Ranker`: (rowid, bm25) of the rows matching
    `expression` under `condition` (SQL on the table's columns, qualified by its name), best
    first; the newest `window` matches only (None: all), the best `most` (None: all).

    bm25 costs per matching row; a word in most chunks would be scored tens of thousands of
    times. With a window FTS5 walks the match newest first, scoring as it goes, and stops after
    the window. One pass: a cut-off rowid found first would walk the match twice, which doubles
    the cost of a phrase of common words ("the with" checks positions in nearly every chunk)."""
    where, params = condition
    sql = f"""SELECT rowid, bm25({table}, {", ".join("?" * len(weights))}) AS score
                FROM {table}
               WHERE {table} MATCH ? AND {where}"""
    values: list[object] = [*weights, expression, *params]
    if window is not None:
        sql = f"SELECT rowid, score FROM ({sql} ORDER BY rowid DESC LIMIT ?)"
        values.append(window)
    if most is not None:
        sql += " ORDER BY score, rowid LIMIT ?"
        values.append(most)
    return sql, values


def ranked_top(
    conn: sqlcipher3.Connection,
    table: str,
    weights: Sequence[float],
    condition: tuple[str, list[object]],
    fts_query: str,
    any_of: Sequence[str],
    limit: int,
    *,
    window: int | None,
    essential_rows: int,
    budget: WorkBudget | None,
    database: str,
) -> list[tuple[int, float]] | None:
    """The best `limit` (rowid, bm25) of `fts_query` among the rows under `condition` (see
    `bm25_statement`): an OR query (`any_of` its phrases) from its rare phrases when that ranks
    it better, else the plain windowed statement; every statement within one work budget (None:
    a statement ran out of work)."""

    def fetch(sql: str, values: Sequence[object]) -> list[tuple] | None:
        return fetch_within(conn, sql, values, budget)

    def rank(
        expression: str, window: int | None, most: int | None
    ) -> list[tuple[int, float]] | None:
        return fetch(*bm25_statement(table, weights, expression, condition, window, most))

    if len(any_of) > 1:
        top = top_of_any(
            table,
            any_of,
            limit,
            window=window,
            essential_rows=essential_rows,
            fetch=fetch,
            rank=rank,
            database=database,
        )
        if top is not None:
            return top
    return rank(fts_query, window, limit)


def _scored_exactly(
    essential: list[str], common: list[str], rank: Ranker
) -> dict[int, float] | None:
    """bm25 over every phrase for each chunk holding an essential phrase."""
    partial = rank(_any(essential), None, None)
    if partial is None:
        return None
    scores = dict(partial)
    if scores:
        both = rank(f"({_any(essential)}) AND ({_any(common)})", None, None)
        if both is None:
            return None
        scores.update(both)
    return scores


def _any(phrases: Sequence[str]) -> str:
    return " OR ".join(phrases)


def _rank_order(row: tuple[int, float]) -> tuple[float, int]:
    return row[1], row[0]


def idf(total_rows: int, hits: int) -> float:
    """FTS5's bm25 idf (fts5_aux.c), floored where it would be negative."""
    value = math.log((total_rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


def row_count(table: str, fetch: Fetch) -> int | None:
    """The row count bm25 uses: the first varint of the FTS5 averages record."""
    values = _averages(table, fetch)
    if values is None:
        return None
    return values[0] if values else 0


def table_totals(table: str, fetch: Fetch) -> tuple[int, int] | None:
    """(rows, tokens in every column) from the FTS5 averages record."""
    values = _averages(table, fetch)
    if values is None:
        return None
    return (values[0], sum(values[1:])) if values else (0, 0)


def _averages(table: str, fetch: Fetch) -> list[int] | None:
    """The FTS5 averages record's varints: the row count, then each column's token total
    (None: out of work)."""
    rows = fetch(f"SELECT block FROM {table}_data WHERE id = ?", (_AVERAGES_ID,))
    if rows is None:
        return None
    blob = rows[0][0] if rows and rows[0][0] else b""
    values = []
    while blob:
        value, size = _varint(blob)
        values.append(value)
        blob = blob[size:]
    return values


def _varint(blob: bytes) -> tuple[int, int]:
    """SQLite's big-endian varint (seven bits a byte while the top bit is set, eight in a
    ninth), and how many bytes it took."""
    value = 0
    for place, byte in enumerate(blob[:9]):
        if place == 8:
            return (value << 8) | byte, 9
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, place + 1
    return value, len(blob)


def forget_phrase_counts() -> None:
    """Empty the cache of phrase counts (a benchmark pass starts as cold as the first)."""
    with _counts_lock:
        _counts.clear()


def phrase_counts(
    table: str, phrases: Sequence[str], *, fetch: Fetch, database: str
) -> dict[str, int] | None:
    """How many rows of `table` match each phrase, over the whole table (as bm25's idf);
    None when a count ran out of time."""
    structure_rows = fetch(f"SELECT block FROM {table}_data WHERE id = ?", (_STRUCTURE_ID,))
    if structure_rows is None:
        return None
    structure = structure_rows[0][0] if structure_rows else None
    with _counts_lock:
        cache = _counts.setdefault((database, table), _Counts())
        if cache.structure != structure:
            cache.structure, cache.by_phrase = structure, OrderedDict()
        known = {phrase: cache.by_phrase.get(phrase) for phrase in dict.fromkeys(phrases)}
    found: dict[str, int] = {}
    for phrase, hits in known.items():
        if hits is None:
            rows = fetch(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (phrase,))
            if rows is None:
                return None
            hits = rows[0][0]
        found[phrase] = hits
    with _counts_lock:
        if cache.structure == structure:
            for phrase, hits in found.items():
                cache.by_phrase[phrase] = hits
                cache.by_phrase.move_to_end(phrase)
            while len(cache.by_phrase) > _CACHED_PHRASES:
                cache.by_phrase.popitem(last=False)
    return found
