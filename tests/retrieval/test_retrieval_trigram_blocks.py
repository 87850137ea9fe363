"""The trigram list over blocks of chunks (KB migration 0011): ranked blocks become the chunks in
them that match, exactly as a row per chunk would have matched."""

from __future__ import annotations

from capy.retrieval import SearchFilters
from capy.store import chunk_rowid
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
