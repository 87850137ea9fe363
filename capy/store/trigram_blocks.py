"""The trigram table's rows: one per block of consecutive chunks, resolved to chunks on search.

Since migration 0011 `chunks_trigram` holds one row per block of `TRIGRAM_BLOCK_CHUNKS`
consecutive chunks of a source (their contents joined by newlines, their distinct titles
likewise), with the rowid of the block's first chunk. FTS5 pays per row and distinct term: a
chunk of a few hundred bytes holds most of its trigrams once, so a row per chunk wrote nearly
one doclist entry per trigram of text. Measured on the 6.1 MB of real files `capy bench peer`
indexes: the trigram inserts' CPU per chunk 2.4-2.6 s, per block of 16 chunks 1.5 s, per whole
source 1.4 s (4 chunks: 1.8 s). A block, not a whole source, so that finding the chunks of a
matched row reads at most 16 chunks.

The trigram list ranks blocks by bm25 as it ranked chunks, and each block then gives the chunks
in it that match the query themselves (every AND group has a phrase that is a substring of the
chunk's title or content, case folded as the trigram tokenizer folds it); a block whose terms
are spread over several chunks gives none, as no chunk row would have matched. The chunks of
the blocks read are then ranked together by bm25 computed per chunk (`_Scorer`), so the list
orders chunks as a row per chunk did. A block's rank does not bound its chunks', so blocks are
read past the first `limit` (`top_chunks`): reading only those lost a short chunk in a block of
long ones, and an AND query whose top blocks held its phrases in different chunks gave nothing.

Newlines join the chunks: no query phrase holds a newline (query text has control characters
turned into spaces), so a trigram across a join never matches a phrase that no chunk holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import sqlcipher3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.store.disjunction import Fetch

# 16 chunks a block: a power of two, so a block is an aligned run of chunk rowids and the rowid
# range delete of a source still removes its blocks. A schema constant, not a tuning knob:
# changing it needs a migration that rebuilds the table (as 0011 does from `chunks`).
TRIGRAM_BLOCK_BITS = 4
TRIGRAM_BLOCK_CHUNKS = 1 << TRIGRAM_BLOCK_BITS
_BLOCK_MASK = ~(TRIGRAM_BLOCK_CHUNKS - 1)
_JOIN = "\n"
TABLE = "chunks_trigram"
# FTS5's bm25 constants (fts5_aux.c).
_K1 = 1.2
_B = 0.75
INSERT_BLOCK = "INSERT INTO chunks_trigram (rowid, title, content) VALUES (?, ?, ?)"

# A quoted FTS5 string ("" inside is one quote) or the AND that separates groups.
_QUERY_TOKEN = re.compile(r'"((?:[^"]|"")*)"|\bAND\b')


def block_rowid(chunk_rowid: int) -> int:
    return chunk_rowid & _BLOCK_MASK


def trigram_blocks(rows: Iterable[Sequence]) -> Iterator[tuple[int, str, str]]:
    """(block rowid, titles, contents) of (rowid, title, content, ...) rows in rowid order; the
    rows of one block must all be given in one call."""
    for block, members in groupby(rows, key=lambda row: block_rowid(row[0])):
        rows_in = list(members)
        titles = dict.fromkeys(row[1] for row in rows_in if row[1])
        yield block, _JOIN.join(titles), _JOIN.join(row[2] for row in rows_in)


def rebuild_trigram_blocks(conn: sqlcipher3.Connection) -> None:
    """Fill the (empty) trigram table from every stored chunk, a block a row."""
    rows = conn.execute("SELECT rowid, title, content FROM chunks ORDER BY rowid")
    conn.executemany(INSERT_BLOCK, trigram_blocks(rows))


def phrase_groups(fts_query: str) -> list[tuple[str, ...]]:
    """The phrases of a trigram query as AND-ed groups of OR-ed phrases, case folded (`fold`):
    the only shapes `capy.retrieval.query.trigram_query` builds (`"a" AND ("b" OR "c")`, or
    phrases OR-ed)."""
    groups: list[list[str]] = [[]]
    for match in _QUERY_TOKEN.finditer(fts_query):
        if match.group(1) is None:
            groups.append([])
        else:
            groups[-1].append(fold(_unquoted(match.group(1))))
    return [tuple(group) for group in groups if group]


def fold(text: str) -> str:
    """Text case folded as the trigram tokenizer folds it, for substring tests. `str.lower`
    folds differently: the micro sign stays apart from mu, a final sigma from sigma (and
    'ΣΥΣ'.lower() ends in one), the long s from s; `casefold` puts every character the
    tokenizer folds together in one class (checked over every code point up to U+2FFFF but
    the noncharacters U+FFFD-FFFF). It is coarser in places ('ß' folds to 'ss'), so a chunk of a
    matched block may pass that a row of its own would not have matched, never the reverse."""
    return text.casefold()


def _unquoted(body: str) -> str:
    return body.replace('""', '"')


@dataclass(frozen=True)
class Statistics:
    """How the table's statistics are read: `fetch` within the pass's work budget, and the
    phrases the pass counted (an OR pass of several: see `_Scorer`), as it typed them, so
    their counts are read back from its cache under the same keys; () when it counted none."""

    fetch: Fetch
    database: str
    counted: tuple[str, ...]
    unindexed_chunks: int = 0  # chunks of pending sources, not in the table's totals


# (how many of the best blocks) -> ranked (block rowid, bm25), best first; None when out of work.
RankBlocks = Callable[[int], "list[tuple[int, float]] | None"]


def top_chunks(
    conn: sqlcipher3.Connection,
    rank_blocks: RankBlocks,
    fts_query: str,
    limit: int,
    *,
    most_blocks: int,
    first_blocks: int,
    weights: Sequence[float],
    statistics: Statistics,
    pending: Sequence[int] = (),
) -> list[tuple[int, float]] | None:
    """The best `limit` matching chunks, as ranked (rowid, bm25), of the blocks `rank_blocks`
    ranks; None when a statement ran out of work (a list cut short gives nothing, as
    `capy.retrieval.Corpus.match` says).

    A block's bm25 is not a bound on its chunks' own: a short chunk that holds the phrase
    twice, in a block of fifteen long ones, scores high while its block pays the length of
    all sixteen; and a block can hold an AND query's phrases in different chunks, so it ranks
    high and gives no chunk. So blocks are read best first, the first `first_blocks`, then up to
    `most_blocks` (the search pack's bound on what one list reads), until `limit` chunks match
    and the k-th chunk's score reaches the ceiling any chunk of an unread block could score
    (per phrase, (k1 + 1) * idf: `_Scorer.ceiling`), or the ranking has no more blocks. Two
    windows at most, as each ranks the blocks again; a first window smaller than the bound only
    pays where asking for fewer blocks costs less (the OR pass, whose MaxScore threshold is the
    k-th score: `capy.store.disjunction`).

    `pending` are the blocks of sources whose trigram rows are not written yet (in scope:
    capy.store.trigram_backlog); they are read with the first window, whatever it ranks.
    """
    groups = phrase_groups(fts_query)
    if not groups:
        return []
    scorer: _Scorer | None = None
    read: set[int] = set()
    best: list[tuple[float, int]] = []  # (score, rowid), best first, at most `limit`
    window = max(min(first_blocks, most_blocks), 1)
    while True:
        blocks = rank_blocks(window)
        if blocks is None:
            return None
        fresh = list(dict.fromkeys(block_rowid(b) for b, _ in blocks))
        if not read:
            fresh = list(dict.fromkeys([*fresh, *pending]))
        fresh = [block for block in fresh if block not in read]
        read.update(fresh)
        matched = _matching_chunks(statistics.fetch, fresh, groups)
        if matched is None:
            return None
        if matched:
            if scorer is None:
                phrases = [phrase for group in groups for phrase in group]
                scorer = _Scorer.of(conn, phrases, weights, statistics, matched)
            scored = [(scorer.score(title, content), rowid) for rowid, title, content in matched]
            best = sorted(best + scored)[:limit]
        if len(blocks) < window or window >= most_blocks:
            return _ranked(best)  # every matching block read, or as many as a list reads
        if scorer and len(best) == limit and -best[-1][0] >= scorer.ceiling():
            return _ranked(best)  # no chunk of an unread block can enter the top `limit`
        window = most_blocks


def _ranked(best: list[tuple[float, int]]) -> list[tuple[int, float]]:
    return [(rowid, score) for score, rowid in best]


def _matching_chunks(
    fetch: Fetch, blocks: Sequence[int], groups: list[tuple[str, ...]]
) -> list[tuple[int, str, str]] | None:
    """(rowid, folded title, folded content) of the chunks of `blocks` (aligned block rowids)
    in which every group has a phrase; None when a read ran out of work. Blocks are read
    aligned, so a store an older capy wrote to (a trigram row per chunk, several per block)
    gives each chunk once."""
    if not blocks:
        return []
    # One statement a window: a statement per block cost more than the reads.
    rows = fetch(
        f"""WITH block (first) AS (VALUES {", ".join(["(?)"] * len(blocks))})
            SELECT chunk.rowid, chunk.title, chunk.content
              FROM block JOIN chunks AS chunk
                ON chunk.rowid BETWEEN block.first AND block.first + {TRIGRAM_BLOCK_CHUNKS - 1}""",
        list(blocks),
    )
    if rows is None:
        return None
    matched: list[tuple[int, str, str]] = []
    for rowid, title, content in rows:
        title, content = fold(title or ""), fold(content or "")
        if all(any(p in title or p in content for p in group) for group in groups):
            matched.append((rowid, title, content))
    return matched


class _Scorer:
    """bm25 of one chunk as FTS5 computes it for a row (fts5_aux.c): per phrase, idf times the
    column-weighted occurrences f, as f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)), with D
    the chunk's trigram count. The average length comes from the block table's token total over
    the chunks it holds, the idf from its row and phrase counts: what a chunk-level table would
    give, up to how phrases spread over blocks instead of chunks.

    Phrase counts are taken only where the OR pass takes them anyway (`counted`: it starts from
    its rarest phrases, capy.store.disjunction, and caches the counts): counting a common
    phrase walks its whole doclist, which on a large store costs more than the search. Elsewhere
    every phrase weighs the same: one phrase alone is ordered the same by any weight, and in an
    AND every chunk holds every group."""

    def __init__(self, idfs: dict[str, float], weights: Sequence[float], average: float) -> None:
        self.idfs, self.weights, self.average = idfs, weights, max(average, 1.0)

    @classmethod
    def of(
        cls,
        conn: sqlcipher3.Connection,
        phrases: Sequence[str],
        weights: Sequence[float],
        scope: Statistics,
        matched: Sequence[tuple[int, str, str]] = (),
    ) -> _Scorer:
        """`matched`: the chunks to score, whose average length stands in for the table's
        while it holds no rows yet (every source still pending)."""
        from capy.store.counters import total_chunks  # search only
        from capy.store.disjunction import idf, phrase_counts, table_totals

        even = dict.fromkeys(phrases, 1.0)
        totals = table_totals(TABLE, scope.fetch)
        if totals is None:  # out of work
            return cls(even, weights, 1.0)
        rows, tokens = totals
        indexed = total_chunks(conn) - scope.unindexed_chunks
        if tokens and indexed > 0:
            average = tokens / indexed
        else:  # nothing in the table yet: the chunks at hand give the length
            lengths = [_trigrams(title) + _trigrams(content) for _, title, content in matched]
            average = sum(lengths) / max(len(lengths), 1)
        if not scope.counted:
            return cls(even, weights, average)
        # Counted as the OR pass typed them (its cache's keys); a phrase it did not name, quoted.
        typed = {fold(_unquoted(quoted[1:-1])): quoted for quoted in scope.counted}
        quoted = {p: typed.get(p) or '"' + p.replace('"', '""') + '"' for p in phrases}
        counts = phrase_counts(
            TABLE, list(quoted.values()), fetch=scope.fetch, database=scope.database
        )
        if counts is None:
            return cls(even, weights, average)
        return cls({p: idf(rows, counts[quoted[p]]) for p in phrases}, weights, average)

    def ceiling(self) -> float:
        """What no chunk's score reaches: a phrase's share stays below (k1 + 1) * idf however
        often the chunk holds it (FTS5's sign: the best possible score is above this)."""
        return sum((_K1 + 1) * weight for weight in self.idfs.values())

    def score(self, title: str, content: str) -> float:
        title_weight, content_weight = self.weights
        length = _trigrams(title) + _trigrams(content)
        norm = _K1 * (1 - _B + _B * length / self.average)
        total = 0.0
        for phrase, weight in self.idfs.items():
            f = title_weight * title.count(phrase) + content_weight * content.count(phrase)
            if f:
                total += weight * f * (_K1 + 1) / (f + norm)
        return -total  # FTS5's sign: lower is better


def _trigrams(text: str) -> int:
    return max(len(text) - 2, 0)
