"""StoreCorpus shortcuts that must not change results: the skipped source test and the
vocabulary cache surviving the searches' own access bookkeeping."""

from __future__ import annotations

from capy.retrieval import SearchFilters
from capy.store.corpus import StoreCorpus, _vocabulary_caches


def test_kind_and_label_filters_still_apply_when_some_sources_are_excluded(put, corpus):
    put("notes/a.md", [("Kafka", "kafka consumer lag")])
    put("pytest -v", [("Kafka", "kafka test output")], kind="ephemeral")
    every = corpus.match("porter", '"kafka"', 10, SearchFilters())
    assert {candidate.source_label for candidate in every} == {"notes/a.md"}
    both = corpus.match("porter", '"kafka"', 10, SearchFilters(kinds=("durable", "ephemeral")))
    assert {candidate.source_label for candidate in both} == {"notes/a.md", "pytest -v"}
    labelled = SearchFilters(kinds=("durable", "ephemeral"), source="pytest*")
    assert [c.source_label for c in corpus.match("trigram", '"kafka"', 10, labelled)] == [
        "pytest -v"
    ]


def test_recording_an_access_keeps_the_vocabulary_cache(store, put, rules):
    put("notes/a.md", [("Kafka", "kafka consumer lag")])
    kinds = tuple(str(kind) for kind in rules.view("retention").kinds.default_search)
    corpus = StoreCorpus(store, default_kinds=kinds, bm25=rules.view("search").bm25)
    first = corpus.vocabulary_candidates(3, 6)
    (candidate,) = corpus.match("porter", '"kafka"', 10, SearchFilters())
    corpus.record_access([candidate.source_id])
    again = StoreCorpus(store, default_kinds=kinds, bm25=rules.view("search").bm25)
    assert again.vocabulary_candidates(3, 6) is first  # same snapshot: not re-read
    put("notes/b.md", [("Zookeeper", "zookeeper quorum")])
    assert "quorum" in again.vocabulary_candidates(3, 6)  # a real change is seen
    assert str(store.path) in _vocabulary_caches


def test_a_length_band_holds_the_most_frequent_words_first_up_to_the_limit(put, corpus):
    put("notes/a.md", [("one", "lagging lagging lagging kafka kafka broker quorum zk")])
    band = corpus.vocabulary_candidates(5, 7)
    assert band == ("lagging", "kafka", "broker", "quorum")  # by frequency, then alphabetically
    assert corpus.vocabulary_candidates(6, 7, 2) == ("lagging", "broker")
    assert corpus.vocabulary_candidates(3, 40, 1) == ("lagging",)
    assert corpus.known_words(["kafka", "kafk", "zk"]) == {"kafka"}  # words under 3 never count
    assert corpus.inside_words(["afk", "rok", "xyz"]) == {"afk", "rok"}
