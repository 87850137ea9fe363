"""The trigram list over blocks of chunks (KB migration 0011): ranked blocks become the chunks in
them that match, exactly as a row per chunk would have matched."""

from __future__ import annotations

from capy.retrieval import SearchFilters
from capy.store import chunk_rowid, transaction
from capy.store.trigram_blocks import TRIGRAM_BLOCK_CHUNKS, phrase_groups

FILLER = "plain words about nothing in particular"


def _chunks(count: int, **special: str) -> list[tuple[str, str]]:
    return [(f"part {n}", special.get(f"c{n}", f"{FILLER} {n}")) for n in range(count)]


def _ids(candidates) -> list[int]:
    return [candidate.chunk_id for candidate in candidates]


def test_a_substring_finds_its_own_chunk_inside_a_block(put, corpus, store) -> None:
    source = put("big", _chunks(40, c21="class RetryConfig holds the backoff"))
    rows = store.conn.execute("SELECT count(*) FROM chunks_trigram").fetchone()[0]
    assert rows == -(-40 // TRIGRAM_BLOCK_CHUNKS)  # one row per block, not per chunk
    found = corpus.match("trigram", '"tryconf"', 10, SearchFilters())
    assert _ids(found) == [chunk_rowid(source, 21)]
    assert found[0].content == "class RetryConfig holds the backoff"


def test_and_across_two_chunks_of_a_block_matches_neither(put, corpus) -> None:
    source = put(
        "spread",
        _chunks(6, c0="alphanumeric start", c1="omegalike end", c4="alphanumeric and omegalike"),
    )
    found = corpus.match("trigram", '"phanum" AND "megali"', 10, SearchFilters())
    assert _ids(found) == [chunk_rowid(source, 4)]


def test_titles_match_as_their_own_column(put, corpus) -> None:
    source = put("titled", [("Deployment notes", "body one"), ("Other", "body two")])
    found = corpus.match("trigram", '"ploymen" AND "body"', 10, SearchFilters())
    assert _ids(found) == [chunk_rowid(source, 0)]


def test_chunks_rank_by_bm25_as_rows_of_their_own(put, corpus) -> None:
    needle = "zebrafish"
    first = put(
        "first", _chunks(3, c0=f"{needle} {FILLER} {FILLER} {FILLER}", c2=f"{needle} {needle}")
    )
    second = put("second", _chunks(3, c1=needle, c2=f"{FILLER} {needle} {FILLER}"))
    found = _ids(corpus.match("trigram", '"ebrafi"', 10, SearchFilters()))
    # Twice in a short chunk, then once in a short one, then once in longer ones (shortest first).
    assert found == [
        chunk_rowid(first, 2),
        chunk_rowid(second, 1),
        chunk_rowid(second, 2),
        chunk_rowid(first, 0),
    ]
    assert len(corpus.match("trigram", '"ebrafi"', 3, SearchFilters())) == 3


def test_phrase_groups_read_the_queries_the_core_builds() -> None:
    assert phrase_groups('"Retry" AND ("conf" OR "cfg")') == [("retry",), ("conf", "cfg")]
    assert phrase_groups('"a ""quoted"" word" OR "AND"') == [('a "quoted" word', "and")]


def test_a_short_chunk_in_a_block_of_long_ones_ranks_as_its_own_row(put, corpus) -> None:
    # The block pays the length of its fifteen long chunks; the short chunk holding the phrase
    # twice is still the best chunk of all, as a row of its own would rank.
    long_text = " ".join(f"filler{n}" for n in range(400))
    best = put("best", [("t", "RetryConfig RetryConfig")] + [("t", long_text)] * 15)
    for n in range(30):
        words = " ".join(f"w{n}x{i}" for i in range(60))
        put(f"other{n}", [("t", f"the RetryConfig is set in {words}")])
    found = corpus.match("trigram", '"tryconf"', 10, SearchFilters())
    assert _ids(found)[0] == chunk_rowid(best, 0)


def test_an_and_spread_over_chunks_of_many_blocks_still_finds_the_one_real_match(
    put, corpus, store
) -> None:
    filler = " ".join(f"filler{n}" for n in range(60))
    answer = put("answer", [("notes", f"RetryConfig sets the BackoffPolicy. {filler}")])
    for n in range(50):  # blocks that match the AND and outrank the answer, with no chunk that does
        put(f"spread{n}", [("a", "RetryConfig"), ("b", "BackoffPolicy")])
    query = '"tryconf" AND "ffpoli"'
    matched = store.conn.execute(
        "SELECT count(*) FROM chunks_trigram WHERE chunks_trigram MATCH ?", (query,)
    ).fetchone()[0]
    assert matched == 51
    for limit in (10, 40):
        assert _ids(corpus.match("trigram", query, limit, SearchFilters())) == [
            chunk_rowid(answer, 0)
        ]


def test_chunks_are_case_folded_as_the_trigram_tokenizer_folds_them(put, corpus) -> None:
    # Each pair is one class to the tokenizer, two to str.lower(): the micro sign and mu (Go's
    # durations), a final sigma, the long s, the curled beta.
    cases = [
        ("250\u00b5s", '"250\u03bcs"'),
        ("\u03a4\u039f \u03a3\u03a5\u03a3\u03a4\u0397\u039c\u0391", '"\u03a3\u03a5\u03a3"'),
        ("\u03bb\u03cc\u03b3\u03bf\u03c2 here", '"\u03bb\u03cc\u03b3\u03bf\u03c3 h"'),
        ("Mi\u017f\u017fissippi", '"missis"'),
        ("\u03d0eta decay", '"\u03b2eta d"'),
    ]
    for n, (content, query) in enumerate(cases):
        source = put(f"fold{n}", [("t", f"took {content} in all")])
        assert _ids(corpus.match("trigram", query, 10, SearchFilters())) == [
            chunk_rowid(source, 0)
        ], query


def test_a_store_an_older_capy_wrote_a_row_per_chunk_to_gives_each_chunk_once(
    put, corpus, store
) -> None:
    source = put("old", _chunks(30, c5=f"{FILLER} the RetryConfig value"))
    rows = store.conn.execute(
        "SELECT rowid, title, content FROM chunks WHERE rowid >> 20 = ? ORDER BY rowid", (source,)
    ).fetchall()
    with transaction(store.conn):  # as a capy before the block table wrote them
        store.conn.execute("DELETE FROM chunks_trigram")
        store.conn.executemany(
            "INSERT INTO chunks_trigram (rowid, title, content) VALUES (?, ?, ?)", rows
        )
    assert _ids(corpus.match("trigram", '"tryconf"', 10, SearchFilters())) == [
        chunk_rowid(source, 5)
    ]
    found = _ids(corpus.match("trigram", '"plain words"', 40, SearchFilters()))
    assert sorted(found) == [chunk_rowid(source, n) for n in range(30)]


def test_a_cold_or_pass_counts_each_phrase_once_whatever_its_case(put, corpus, store) -> None:
    corpus.essential_rows = 1  # a small store: the OR pass starts from its rare phrases
    for n in range(40):
        put(f"s{n}", [("t", f"RetryConfig common words {n}")] + [("t", "common words")] * 20)
    put("rare", [("t", "XyloPhoneQ RetryConfig")])
    counts: list[str] = []
    store.conn.set_trace_callback(
        lambda sql: counts.append(sql) if "count(*)" in sql and "MATCH" in sql else None
    )
    phrases = ('"RetryConfig"', '"XyloPhoneQ"')
    try:
        corpus.match("trigram", " OR ".join(phrases), 10, SearchFilters(), any_of=phrases)
    finally:
        store.conn.set_trace_callback(None)
    assert len(counts) == 2
