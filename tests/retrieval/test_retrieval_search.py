"""The whole pipeline against a real encrypted store."""

from __future__ import annotations

import pytest

from capy.retrieval import SearchFilters, search
from capy.store.access_log import fold_access, pending_access
from capy.store.corpus import search_store

WAL_DOC = [
    ("Open", "func Open recovers the log; corruption is returned as ErrCorruptRecord."),
    ("Errors", 'ErrCorruptRecord = errors.New("wal: corrupt record (checksum mismatch)")'),
    ("Locks", "The writer locks the segment before appending; readers never wait."),
    ("Breaker", "The circuit breaker resets after the timeout expires."),
]


def one(store, query, rules, **options):
    (result,) = search_store(store, [query], rules=rules, **options)
    return result


def test_and_finds_the_chunk_with_every_term(store, put, rules):
    put("wal.go", WAL_DOC)
    result = one(store, "circuit breaker timeout", rules)
    assert [hit.title for hit in result.hits] == ["Breaker"]
    assert result.hits[0].layer == "rrf"  # both lists found it
    assert result.corrected_query is None


def test_or_fallback_when_and_finds_nothing(store, put, rules):
    put("wal.go", WAL_DOC)
    result = one(store, "breaker readers", rules)
    assert {hit.title for hit in result.hits} == {"Breaker", "Locks"}


def test_or_fills_slots_after_every_and_hit(store, put, rules):
    put(
        "notes.md",
        [
            ("Rotation", "When a segment is full the log starts a new one, long after the writer."),
            ("Writer", "writer writer writer writer"),
        ],
    )
    # AND finds one chunk; the OR pass fills the next slot, ranked after it whatever its boosts.
    result = one(store, "writer segment", rules)
    assert [hit.title for hit in result.hits] == ["Rotation", "Writer"]


def test_long_or_query_skips_the_trigram_list(store, put, rules):
    put("wal.go", WAL_DOC)
    # Five terms, no chunk holds them all: the OR pass runs on the porter list alone, so a
    # substring of an identifier ("CorruptRec" in ErrCorruptRecord) is not fused in.
    result = one(store, "breaker resets CorruptRec zebra quartz", rules)
    assert [hit.title for hit in result.hits] == ["Breaker"]
    assert result.hits[0].layer == "porter"


def test_layers_say_which_list_found_a_hit(store, put, rules):
    put("wal.go", WAL_DOC)
    # Porter folds "locking" to "lock"; the substring "locking" is nowhere.
    assert one(store, "locking", rules).hits[0].layer == "porter"
    # "CorruptRec" is only a substring of an identifier: trigram alone.
    trigram = one(store, "CorruptRec", rules).hits
    assert {hit.layer for hit in trigram} == {"trigram"}


def test_typo_is_corrected_and_reported(store, put, rules):
    put("wal.go", WAL_DOC)
    result = one(store, "circut breaker", rules)
    assert result.corrected_query == "circuit breaker"
    assert [hit.title for hit in result.hits] == ["Breaker"]
    assert result.hits[0].layer == "fuzzy"


@pytest.mark.parametrize("query", ["kafka zookeeper", "numpy segfault", "zzzzzz qqqqqq"])
def test_absent_terms_find_nothing(store, put, rules, query):
    put("wal.go", WAL_DOC)
    result = one(store, query, rules)
    assert result.hits == ()
    assert result.corrected_query is None


def test_entity_match_ranks_the_definition(store, put, rules):
    put("wal.go", WAL_DOC)
    hits = one(store, "ErrCorruptRecord", rules, limit=5).hits
    assert {hit.title for hit in hits} == {"Open", "Errors"}


def test_kind_filter_and_note(store, put, rules):
    put("durable-doc", [("Doc", "shared needle text")])
    put("pytest run", [("Log", "shared needle text in a log")], kind="ephemeral")
    default = one(store, "needle", rules)
    assert [hit.source_label for hit in default.hits] == ["durable-doc"]
    assert default.note == "1 ephemeral source was not searched"
    assert default.excluded_kinds == ("ephemeral",)
    both = one(store, "needle", rules, kinds=["durable", "ephemeral"])
    assert {hit.source_label for hit in both.hits} == {"durable-doc", "pytest run"}
    assert both.note is None


def test_source_filter_exact_and_prefix(store, put, rules):
    put("docs/a.md", [("A", "common word alpha")])
    put("docs/b.md", [("B", "common word beta")])
    put("notes_%.md", [("C", "common word gamma")])
    assert {h.source_label for h in one(store, "common", rules, source="docs/a.md").hits} == {
        "docs/a.md"
    }
    prefixed = one(store, "common", rules, source="docs/*", limit=10).hits
    assert {hit.source_label for hit in prefixed} == {"docs/a.md", "docs/b.md"}
    # `%` and `_` are literal in a prefix.
    assert {h.source_label for h in one(store, "common", rules, source="notes_%*").hits} == {
        "notes_%.md"
    }


def test_unknown_kind_is_a_clear_error(store, rules):
    with pytest.raises(ValueError, match="unknown source kind 'durabel'"):
        search_store(store, ["x"], kinds=["durabel"], rules=rules)


def test_diversity_lets_other_sources_in(store, put, rules):
    put("big.log", [(f"part {i}", f"timeout number {i}") for i in range(6)])
    put("small.md", [("Small", "a timeout once")])
    hits = one(store, "timeout", rules, limit=3).hits
    assert "small.md" in {hit.source_label for hit in hits}


def test_limit_is_clamped(store, put, rules, search_rules):
    put("many", [(f"t{i}", f"needle {i}") for i in range(40)])
    assert len(one(store, "needle", rules, limit=1000).hits) == search_rules.limits.max_results
    assert len(one(store, "needle", rules, limit=0).hits) == 1
    assert len(one(store, "needle", rules).hits) == search_rules.limits.default_results


def test_access_is_recorded(store, put, rules):
    source_id = put("wal.go", WAL_DOC)
    one(store, "breaker", rules)
    one(store, "breaker", rules)
    assert pending_access(store.path) == {source_id: (2, pending_access(store.path)[source_id][1])}
    fold_access(store.conn, store.path)
    count, accessed = store.conn.execute(
        "SELECT access_count, accessed_at FROM sources WHERE id = ?", (source_id,)
    ).fetchone()
    assert count == 2 and accessed is not None


def test_search_inside_a_callers_transaction(store, put, rules):
    put("wal.go", WAL_DOC)
    store.conn.execute("BEGIN")
    assert one(store, "breaker", rules).hits
    assert store.conn.in_transaction  # the caller's transaction is left to the caller
    store.conn.execute("ROLLBACK")


def test_core_works_on_any_corpus(corpus, put, search_rules):
    put("wal.go", WAL_DOC)
    result = search(
        corpus, "breaker", rules=search_rules, filters=SearchFilters(kinds=("durable",))
    )
    assert result.hits[0].title == "Breaker"


def test_indexed_content_is_searchable(store, index, rules):
    index("README.md", "# Tidewater\n\n## Install\n\nRun `pip install tidewater`.\n")
    hits = one(store, "install tidewater", rules).hits
    assert hits and "pip install tidewater" in hits[0].content


def test_default_rules_are_loaded(store, put):
    put("wal.go", WAL_DOC)
    (result,) = search_store(store, ["breaker"])
    assert result.hits[0].title == "Breaker"


def test_many_queries_one_call(store, put, rules):
    put("wal.go", WAL_DOC)
    results = search_store(store, ["breaker", "", "readers"], rules=rules)
    assert [len(result.hits) for result in results] == [1, 0, 1]


def test_huge_single_line_content(store, index, rules):
    # Near the start: the retention pack's size cap may cut the middle of an oversized source.
    line = ("filler " * 2_000) + "UniqueMarker42 " + ("filler " * 300_000)
    index("huge.txt", line)
    hits = one(store, "UniqueMarker42", rules).hits
    assert hits and "UniqueMarker42" in hits[0].snippet
    assert len(hits[0].snippet.encode()) <= rules.view("search").snippets.max_bytes


def test_invalid_utf8_content_is_searchable(store, index, rules):
    index("bin.dat", b"valid words \xff\xfe then searchable token zebrafish")
    assert one(store, "zebrafish", rules).hits


def test_a_long_title_is_searched_whole_and_shown_clipped(store, put, rules):
    shown = rules.view("search").snippets.title_chars
    names = ", ".join(f"node_modules/package-{n}" for n in range(12)) + ", node_modules/react-dom"
    put("package-lock.json", [(f"packages > {{{names}}}", '"version": "18.3.1"')])
    (hit,) = one(store, "react-dom", rules).hits
    assert len(hit.title) == shown
    assert hit.title.startswith("packages > {node_modules/package-0,")
    assert hit.title.endswith(rules.view("search").snippets.ellipsis)
