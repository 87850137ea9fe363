"""The semantic layer on real parts: the pinned model (skipped, saying why, without the extra),
an encrypted scratch store, the backlog, the gated vector list, and the CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from capy.bench.scratch import scratch_store
from capy.rules import load_rules
from capy.semantic import SemanticError, extra_installed
from capy.store.corpus import search_store
from capy.store.indexing import index_content

RULES = load_rules()
DOC = (
    "# Shutdown\n\nTo end the service gracefully, send SIGTERM; workers finish their jobs "
    "first.\n\n# Login\n\nA 401 appears after token refresh when the clock drifts.\n"
)


def _model_missing() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(RULES)


needs_model = pytest.mark.skipif(
    _model_missing() is not None,
    reason=f"semantic layer unavailable: {_model_missing()} (.ci/run installs capy-mcp[semantic])",
)


def test_search_without_vectors_is_lexical_only() -> None:
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        (result,) = search_store(store, ["how do I halt the daemon"], rules=RULES)
        assert result.hits == ()  # no vectors: exactly today's lexical search


def test_the_semantic_pack_pins_every_file() -> None:
    model = RULES.view("semantic").model()
    assert model is not None and model.dimensions == 384
    assert all(len(entry.sha256) == 64 for entry in model.files)


@needs_model
def test_backlog_is_embedded_and_a_paraphrase_finds_its_answer() -> None:
    from capy.semantic.knowledge import pieces_for, status
    from capy.semantic.service import index_now

    _, pieces = pieces_for(RULES)
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        index_content(store, "stop the daemon now", label="run", kind="ephemeral", rules=RULES)
        before = status(store, pieces.version, ["durable"])
        assert (before.sources, before.embedded) == (1, 0)
        assert index_now(store, RULES) == 2  # the ephemeral output is not embedded
        after = status(store, pieces.version, ["durable"])
        assert (after.embedded, after.backlog_chunks, after.vectors) == (1, 0, 2)
        blob = store.conn.execute("SELECT vector FROM chunk_vectors LIMIT 1").fetchone()[0]
        assert len(blob) == 384 * 2  # float16
        (result,) = search_store(store, ["how do I halt the daemon"], rules=RULES)
        assert result.hits and "SIGTERM" in result.hits[0].content
        assert result.hits[0].layer == "vector"
        (absent,) = search_store(store, ["banana bread recipe"], rules=RULES)
        assert absent.hits == ()  # a vector hit alone must be close


@needs_model
def test_new_content_puts_a_source_back_in_the_backlog() -> None:
    from capy.semantic.knowledge import pieces_for, status
    from capy.semantic.service import index_now

    _, pieces = pieces_for(RULES)
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        index_now(store, RULES)
        index_content(
            store, DOC + "\n# More\n\nmore text", label="doc.md", kind="durable", rules=RULES
        )
        again = status(store, pieces.version, ["durable"])
        assert (again.embedded, again.vectors) == (0, 0)
        # another vector version (a model change) sees every source as waiting
        assert status(store, pieces.version + "-other", ["durable"]).embedded == 0


@needs_model
def test_an_altered_model_file_is_one_clear_error(tmp_path: Path) -> None:
    from capy.semantic.artifacts import install_from_dir

    model = RULES.view("semantic").model()
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(SemanticError) as raised:
        install_from_dir(model, tmp_path)
    assert "not the pinned" in raised.value.message


@needs_model
def test_cli_status_index_and_doctor(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path),
    }
    (tmp_path / "doc.md").write_text(DOC)

    def capy(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "capy", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    capy("index", "doc.md")
    assert "1 waiting" in capy("semantic", "status")
    assert "embedded 2 chunks" in capy("semantic", "index")
    assert "0 waiting" in capy("semantic", "status")
    assert "semantic search" in capy("doctor") and "on, model" in capy("doctor")


def test_the_extra_check_does_not_import_the_libraries() -> None:
    assert isinstance(extra_installed(), bool)


def test_the_gate_weighs_a_long_covered_query_as_prose() -> None:
    from capy.retrieval.model import SearchHit
    from capy.retrieval.query import parse_query
    from capy.retrieval.vectors import gate

    search = RULES.view("search")
    settings = search.vectors
    short = parse_query("graceful shutdown signal", search).terms
    long = parse_query(
        "graceful shutdown signal workers finish jobs drain queue before exit", search
    ).terms
    assert len(short) < settings.long_query_terms <= len(long)

    def hit(content: str) -> SearchHit:
        return SearchHit(1, 1, "doc", "durable", "", content, "", "porter", 0.1)

    words = " ".join(term.text for term in long)
    assert gate([hit(words)], 3, long, settings.coverage, settings.long_query_terms) == "and_found"
    assert gate([hit(words)], 0, long, settings.coverage, settings.long_query_terms) == (
        "covered_long"
    )
    assert gate([hit(words)], 0, short, settings.coverage, settings.long_query_terms) == "covered"
    assert gate([hit("nothing alike")], 0, long, settings.coverage, 7) == "weak"
    assert settings.weight.of("covered_long") > settings.weight.of("covered")


def test_a_long_query_needs_only_its_own_coverage_to_count_as_covered() -> None:
    from capy.retrieval.model import SearchHit
    from capy.retrieval.query import parse_query
    from capy.retrieval.vectors import gate

    search = RULES.view("search")
    settings = search.vectors
    assert settings.coverage_long is not None and settings.coverage_long < settings.coverage
    terms = parse_query(
        "alpha bravo charlie delta echo foxtrot golf hotel india kilo", search
    ).terms
    share = (settings.coverage_long + settings.coverage) / 2
    held = " ".join(term.text for term in terms[: int(len(terms) * share)])
    best = [SearchHit(1, 1, "doc", "durable", "", held, "", "porter", 0.1)]

    def chosen(long_query_terms: int) -> str:
        return gate(best, 0, terms, settings.coverage, long_query_terms, settings.coverage_long)

    # The same share of its words: enough for a prose question, too little for a short query.
    assert chosen(len(terms)) == "covered_long"
    assert chosen(len(terms) + 1) == "weak"


@needs_model
def test_a_first_hit_both_lists_hold_stays_first() -> None:
    from capy.semantic.service import index_now

    queries = ["token refresh clock", "service workers jobs", "halt daemon SIGTERM gracefully"]
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        lexical = search_store(store, queries, rules=RULES)
        index_now(store, RULES)
        hybrid = search_store(store, queries, rules=RULES)
    for before, after in zip(lexical, hybrid, strict=True):
        assert before.hits, before.query
        assert after.hits[0].chunk_id == before.hits[0].chunk_id, before.query


# A rustc error among pages about fixing other things: a query naming its code holds one word of
# the error chunk's two (weak), and the model reads `E0599` as noise, so the vector list ranks
# the pages about fixing above it.
RUSTC_ERROR = (
    "error[E0599]: no method named `frobnicate` found for struct `Widget` in the current scope\n"
    "  --> src/main.rs:14:12\n   |\n14 |     widget.frobnicate();\n"
    "   |            ^^^^^^^^^^ method not found in `Widget`\n"
)
FIX_PAGES = [
    "How to fix a flaky network test", "Fixing slow database queries",
    "How to fix merge conflicts in git", "Fix for memory leaks in long running services",
    "Troubleshooting a broken build and how to fix it", "Fixing permission denied errors on Linux",
    "How to fix a crashing mobile app", "Fix the broken CSS layout on Safari",
    "Repairing a corrupted SQLite database", "How to fix timezone bugs",
    "Fixing deadlocks in threaded code", "Fix TLS certificate verification failures",
    "How to fix out of memory kills in containers",
    "Fixing compiler errors: a general guide to reading diagnostics",
    "How we fixed our CI pipeline", "Fix DNS resolution problems",
    "How to repair a bad git rebase", "Fixing unicode decode errors in Python",
]  # fmt: skip


@needs_model
def test_an_exact_error_code_hit_stays_first_when_the_vector_list_ranks_it_low() -> None:
    from capy.semantic.service import index_now

    queries = ["E0599 fix", "how to fix E0599"]
    with scratch_store() as store:
        index_content(store, RUSTC_ERROR, label="rustc", kind="durable", rules=RULES)
        for number, topic in enumerate(FIX_PAGES):
            body = "This page explains the cause and the steps to repair it. " * 3
            index_content(store, f"{topic}\n\n{body}", label=f"page{number}", rules=RULES)
        lexical = search_store(store, queries, limit=10, rules=RULES)
        index_now(store, RULES)
        hybrid = search_store(store, queries, limit=10, rules=RULES)
    for before, after in zip(lexical, hybrid, strict=True):
        assert before.hits[0].source_label == "rustc", before.query
        assert after.hits[0].source_label == "rustc", [h.source_label for h in after.hits]


@needs_model
def test_the_background_run_waits_for_a_tool_call_and_stops_when_asked() -> None:
    import threading
    import time

    from capy.foreground import foreground_call
    from capy.semantic.service import index_now

    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        stop = threading.Event()
        done: list[int] = []
        with foreground_call():  # a tool call runs: no batch starts
            worker = threading.Thread(
                target=lambda: done.append(index_now(store, RULES, stop=stop, quiet_seconds=30))
            )
            worker.start()
            time.sleep(0.3)
            assert not done
            stop.set()  # the server's exit: the run ends without a batch
            worker.join(timeout=10)
        assert done == [0]
        assert index_now(store, RULES, quiet_seconds=0.1) == 2  # no call: it goes on


def test_a_lone_vector_hit_needs_less_for_a_sentence_than_for_a_list_of_names() -> None:
    from capy.retrieval.vectors import alone_floor
    from capy.rules.views.base import with_fields

    search = RULES.view("search")
    vectors = with_fields(search.vectors, min_similarity_alone=0.4, min_similarity_alone_worded=0.2)
    pack = with_fields(search, vectors=vectors)
    assert alone_floor("kafka zookeeper ensemble", pack) == 0.4
    assert alone_floor("shift the caret by an offset", pack) == 0.2
    assert alone_floor("Where is it?", pack) == 0.2  # edge punctuation and case do not matter
    assert alone_floor("find kafka", pack) == 0.4  # a request verb is no function word
    unset = with_fields(search, vectors=with_fields(vectors, min_similarity_alone_worded=None))
    assert alone_floor("shift the caret by an offset", unset) == 0.4


def test_the_piece_size_is_part_of_the_vector_version() -> None:
    from capy.rules.views.base import with_fields

    pack = RULES.view("semantic")
    model = pack.model()
    assert model is not None
    other = with_fields(pack, embedding=with_fields(pack.embedding, window_tokens=96))
    assert pack.vector_version(model) != other.vector_version(model)


def test_the_unseen_markup_rules_are_part_of_the_vector_version() -> None:
    from capy.rules.views.base import with_fields

    pack = RULES.view("semantic")
    model = pack.model()
    assert model is not None and pack.embedding.unseen
    other = with_fields(pack, embedding=with_fields(pack.embedding, unseen=()))
    assert pack.vector_version(model) != other.vector_version(model)


@needs_model
def test_markup_no_reader_sees_is_not_what_the_model_reads() -> None:
    from capy.semantic.service import index_now

    section = "Stops the event loop from waiting on this timer.\n"
    history = "<!-- YAML\nadded: v0.9.1\nchanges:\n  - version: v18.0.0\n-->\n\n"
    with scratch_store() as store:
        index_content(
            store, f"# unref\n\n{history}{section}", label="a.md", kind="durable", rules=RULES
        )
        index_content(store, f"# unref\n\n{section}", label="b.md", kind="durable", rules=RULES)
        index_now(store, RULES)
        rows = store.conn.execute(
            "SELECT c.content, v.vector FROM chunk_vectors AS v JOIN chunks AS c "
            "ON c.rowid = v.chunk_id ORDER BY v.chunk_id"
        ).fetchall()
    assert len(rows) == 2
    assert "<!-- YAML" in rows[0][0]  # the chunk search shows keeps it
    assert rows[0][1] == rows[1][1]  # the model read the same text


@needs_model
def test_a_long_chunk_is_cut_into_pieces_of_the_size_asked() -> None:
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import pieces_for

    model, pieces = pieces_for(RULES)
    assert pieces.size == RULES.view("semantic").embedding.window_tokens
    embedder = shared_embedder(model)
    content = " ".join(f"word{number}" for number in range(400))
    for size in (64, None):  # None: the model's max_tokens
        cut = embedder.windows("Title", content, pieces.stride // 2, 40, size)
        assert len(cut) > 1
        tokens = [len(embedder._plain.encode(text, add_special_tokens=True).ids) for text in cut]
        assert max(tokens) <= (size or model.max_tokens)
        assert all(text.startswith("Title\n") for text in cut)


@needs_model
def test_the_latency_bench_gives_each_chunk_as_many_vectors_as_its_pieces() -> None:
    from capy.bench.hybrid_latency import _random_vectors
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import pieces_for
    from capy.store.migrations import CHUNK_ORDINAL_BITS

    model, pieces = pieces_for(RULES)
    long_section = " ".join(f"word{number}" for number in range(600))
    with scratch_store() as store:
        index_content(
            store, f"# Long\n\n{long_section}\n", label="l.md", kind="durable", rules=RULES
        )
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        # a long comment the embedder leaves out, and a chunk with nothing to read at all
        comment = f"# Hidden\n\n<!-- {long_section} -->\n\nShort.\n"
        index_content(store, comment, label="c.md", kind="durable", rules=RULES)
        index_content(store, "<!-- a draft -->\n", label="d.md", kind="durable", rules=RULES)
        store.conn.execute("UPDATE chunks SET title = '' WHERE content = '<!-- a draft -->'")
        chunks = store.conn.execute(
            "SELECT c.title, c.content, s.content_type FROM chunks AS c JOIN sources AS s "
            "ON s.id = c.rowid >> ?",
            (CHUNK_ORDINAL_BITS,),
        ).fetchall()
        cutter = shared_embedder(model)
        counts = [len(pieces.cut(cutter, *chunk)) for chunk in chunks]
        expected = sum(counts)
        assert expected > len(chunks)  # the long section is several pieces
        assert 0 in counts  # the draft has none
        assert _random_vectors(store, RULES, seed=1) == expected
        rows = store.conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
        assert rows == expected


def test_the_sign_prefilter_keeps_the_rows_nearest_by_sign_within_scope() -> None:
    import numpy as np

    from capy.semantic.sign_prefilter import build

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((500, 384)).astype(np.float16)
    query = vectors[42].astype(np.float32)
    index = build(vectors)
    signs = index.signs
    assert signs.words.shape == (6, 500)  # six 64-bit words a row, word by word
    kept = signs.nearest_rows(query, 20)
    assert len(kept) == 20 and 42 in kept  # the row itself differs in no sign
    above = vectors.astype(np.float32) > signs.mean  # the bits are taken around the mean
    distance = (above != (query > signs.mean)).sum(axis=1)
    assert distance[kept].max() <= np.sort(distance)[19]  # none kept is farther than the 20th
    allowed = np.zeros(500, dtype=bool)
    allowed[100:200] = True
    scoped = signs.nearest_rows(query, 20, allowed)
    assert len(scoped) == 20 and all(100 <= row < 200 for row in scoped)
    assert len(signs.nearest_rows(query, 20, np.zeros(500, dtype=bool))) == 0
    rows, scores = index.scores(query, 500)  # every row, scored on its int8 codes
    exact = vectors.astype(np.float32) @ query
    assert list(rows) == list(range(500))
    assert np.abs(scores - exact).max() < 0.01 * np.abs(exact).max()


@needs_model
def test_past_the_exact_size_the_approximate_search_answers_as_exact_search_does() -> None:
    from dataclasses import replace

    from capy.rules.views.base import with_fields
    from capy.semantic.service import index_now
    from capy.semantic.vector_search import nearest_in_store

    search = RULES.view("search")

    def rules_with(**fields: object) -> object:
        pack = with_fields(search, vectors=with_fields(search.vectors, **fields))
        return replace(RULES, _views={**RULES._views, "search": pack})

    approximate = rules_with(
        exact_max_vectors=0, approximate_max_vectors=100, approximate_rescore_share=1.0
    )
    neither = rules_with(exact_max_vectors=0, approximate_max_vectors=0)
    query = "how do I halt the daemon"
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        index_now(store, RULES)
        exact = nearest_in_store(store, RULES, query, 5, None)
        assert exact
        close = nearest_in_store(store, approximate, query, 5, None)
        assert [chunk for chunk, _ in close] == [chunk for chunk, _ in exact]
        assert all(abs(a - b) < 0.002 for (_, a), (_, b) in zip(close, exact, strict=True))
        assert nearest_in_store(store, neither, query, 5, None) == []  # past both sizes
        assert nearest_in_store(store, approximate, query, 5, lambda: [-1]) == []  # no scope


@needs_model
def test_a_source_filter_keeps_the_vector_list_in_scope() -> None:
    from capy.semantic.service import index_now

    other = "# Stopping\n\nTo halt the daemon, send it SIGTERM and wait for the workers.\n"
    query = "how do I halt the daemon"
    with scratch_store() as store:
        index_content(store, DOC, label="doc.md", kind="durable", rules=RULES)
        index_content(store, other, label="other.md", kind="durable", rules=RULES)
        index_now(store, RULES)
        (everywhere,) = search_store(store, [query], rules=RULES)
        assert {hit.source_label for hit in everywhere.hits} >= {"other.md"}
        (scoped,) = search_store(store, [query], rules=RULES, source="doc.md")
        assert scoped.hits and {hit.source_label for hit in scoped.hits} == {"doc.md"}
