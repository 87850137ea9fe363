"""OR queries ranked from their rarest phrases (MaxScore): the exact top k of the whole store
when the bound proves it, every rare-phrase chunk whatever its age, and phrase counts that follow
the index as it changes."""

from __future__ import annotations

import pytest

from capy.retrieval import SearchFilters
from capy.store.corpus import StoreCorpus
from capy.store.disjunction import forget_phrase_counts, idf, phrase_counts, row_count

PHRASES = ('"rollback"', '"deploy"', '"service"')
QUERY = " OR ".join(PHRASES)


def corpus_with(store, rules, *, window: int | None, essential_rows: int) -> StoreCorpus:
    bm25 = rules.view("search").bm25.model_copy(
        update={"rank_window": window, "essential_rows": essential_rows}
    )
    return StoreCorpus(store, default_kinds=("durable",), bm25=bm25)


@pytest.fixture
def rollback_store(store, put):
    """Two old chunks with the rare word, then many newer ones with only the common words."""
    old = put("old.log", [("rollback", "deploy rollback of the service"), ("r2", "rollback")])
    put("noise.log", [(f"n{n}", "deploy service " + "x" * (n % 7)) for n in range(60)])
    put("more.log", [(f"m{n}", "service restarted") for n in range(40)])
    return old


def ranked(corpus, limit=5):
    found = corpus.match("porter", QUERY, limit, SearchFilters(), any_of=PHRASES)
    return [(c.chunk_id, round(c.rank, 9)) for c in found]


def test_rare_phrase_chunks_outside_the_window_are_ranked(store, rules, rollback_store):
    windowed_only = corpus_with(store, rules, window=20, essential_rows=0)
    assert rollback_store not in {
        c.source_id
        for c in windowed_only.match("porter", QUERY, 5, SearchFilters(), any_of=PHRASES)
    }
    maxscore = corpus_with(store, rules, window=20, essential_rows=10)
    found = maxscore.match("porter", QUERY, 5, SearchFilters(), any_of=PHRASES)
    assert [c.source_id for c in found[:2]] == [rollback_store, rollback_store]


def test_a_proven_top_k_is_the_exact_ranking_of_every_match(store, rules, rollback_store):
    exact = ranked(corpus_with(store, rules, window=None, essential_rows=0), limit=2)
    proven = ranked(corpus_with(store, rules, window=20, essential_rows=10), limit=2)
    assert proven == exact


def test_an_unproven_top_k_merges_the_window_of_common_only_chunks(store, rules, rollback_store):
    # Five results: the two rare-phrase chunks cannot prove that no chunk of common words
    # alone belongs in the other three places, so those come from the window.
    corpus = corpus_with(store, rules, window=20, essential_rows=10)
    found = corpus.match("porter", QUERY, 5, SearchFilters(), any_of=PHRASES)
    assert len(found) == 5
    assert [c.source_id for c in found[:2]] == [rollback_store, rollback_store]
    assert all(c.source_id != rollback_store for c in found[2:])
    assert [c.rank for c in found] == sorted(c.rank for c in found)


def test_phrases_all_within_the_start_budget_are_ranked_whole(store, rules, rollback_store):
    # More matches than the window, all within `essential_rows`: every one is ranked.
    exact = ranked(corpus_with(store, rules, window=None, essential_rows=0))
    whole = ranked(corpus_with(store, rules, window=20, essential_rows=1000))
    assert whole == exact


def test_filters_apply_to_every_statement(store, rules, rollback_store, put):
    put("other.log", [("rollback again", "rollback rollback deploy")], kind="ephemeral")
    corpus = corpus_with(store, rules, window=20, essential_rows=10)
    found = corpus.match("porter", QUERY, 5, SearchFilters(source="old.log"), any_of=PHRASES)
    assert {c.source_id for c in found} == {rollback_store}


def test_matches_that_fit_the_window_take_the_plain_statement(store, rules, put):
    put("small.log", [("a", "deploy rollback"), ("b", "service")])
    plain = ranked(corpus_with(store, rules, window=None, essential_rows=0))
    assert ranked(corpus_with(store, rules, window=20, essential_rows=10)) == plain


def test_phrase_counts_follow_the_index(store, put):
    fetch = lambda sql, params: store.conn.execute(sql, params).fetchall()  # noqa: E731
    put("a.log", [("a", "deploy rollback"), ("b", "deploy")])
    database = str(store.path)
    assert phrase_counts("chunks", PHRASES, fetch=fetch, database=database) == {
        '"rollback"': 1,
        '"deploy"': 2,
        '"service"': 0,
    }
    put("b.log", [("c", "rollback service")])
    counts = phrase_counts("chunks", PHRASES, fetch=fetch, database=database)
    assert counts['"rollback"'] == 2 and counts['"service"'] == 1


def test_phrase_counts_are_cached_until_forgotten(store, put):
    put("a.log", [("a", "deploy rollback")])
    statements = []

    def fetch(sql, params):
        statements.append(sql)
        return store.conn.execute(sql, params).fetchall()

    def counted() -> int:
        statements.clear()
        phrase_counts("chunks", PHRASES, fetch=fetch, database=str(store.path))
        return sum("count(*)" in sql for sql in statements)

    forget_phrase_counts()
    assert counted() == len(PHRASES)
    assert counted() == 0  # the index did not change: every count came from the cache
    forget_phrase_counts()
    assert counted() == len(PHRASES)


def test_row_count_reads_the_fts5_averages_record(store, put):
    put("a.log", [(f"t{n}", f"line {n}") for n in range(300)])
    fetch = lambda sql, params: store.conn.execute(sql, params).fetchall()  # noqa: E731
    # 300 rows need a two-byte varint, so the decoding is exercised past one byte.
    assert (
        row_count("chunks", fetch)
        == 300
        == store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    )


def test_a_phrase_share_stays_below_its_ceiling_and_nears_it(store, put):
    """The bound is FTS5's own: (k1 + 1) * idf from the same row count and phrase count."""
    put("a.log", [("x", "rollback " * 400), ("y", "rollback once")])
    put("b.log", [(f"t{n}", f"other line {n}") for n in range(40)])
    fetch = lambda sql, params: store.conn.execute(sql, params).fetchall()  # noqa: E731
    counts = phrase_counts("chunks", ('"rollback"',), fetch=fetch, database=str(store.path))
    ceiling = 2.2 * idf(row_count("chunks", fetch), counts['"rollback"'])
    shares = [
        -score
        for (score,) in store.conn.execute(
            "SELECT bm25(chunks, 5.0, 1.0) FROM chunks WHERE chunks MATCH '\"rollback\"'"
        )
    ]
    assert all(share < ceiling for share in shares)
    assert max(shares) > 0.9 * ceiling


def test_idf_is_floored_where_fts5_floors_it():
    assert idf(100, 1) == pytest.approx(4.1947, rel=1e-4)
    assert idf(100, 90) == 1e-6
