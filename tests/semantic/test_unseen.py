"""The `unseen` rules of the semantic pack: markup stripped from what the embedding model reads."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from capy.rules import load_rules

RULES = load_rules()


def _model_missing() -> str | None:
    from capy.bench.hybrid import semantic_ready

    return semantic_ready(RULES)


needs_model = pytest.mark.skipif(
    _model_missing() is not None,
    reason=f"semantic layer unavailable: {_model_missing()} (.ci/run installs capy-mcp[semantic])",
)


def test_many_unclosed_comment_openings_are_stripped_in_one_pass() -> None:
    embedding = RULES.view("semantic").embedding
    hostile = "<!--" * 50_000  # 200 KB: 154 s of CPU with the lazy `<!--.*?-->`
    started = time.process_time()
    assert embedding.without_unseen(hostile, "markdown") == hostile
    assert time.process_time() - started < 5.0  # a generous bound: about 2 ms here
    # real comments still go, the first `-->` closing the one opened last
    text = "a <!-- YAML\nadded: v1\n--> b <!-- x --> c <!-- open"
    assert embedding.without_unseen(text, "html") == "a  b  c <!-- open"


@needs_model
def test_the_strip_reads_no_more_than_the_pieces_can_hold() -> None:
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import pieces_for

    model, pieces = pieces_for(RULES)
    cap = RULES.view("semantic").embedding.readable_chars(model)
    assert pieces.chars == cap and cap is not None
    assert cap >= pieces.most * (pieces.size or model.max_tokens)  # at least a char a token
    seen: list[int] = []

    def readable(text: str, content_type: str | None) -> str:
        seen.append(len(text))
        return text

    recording = replace(pieces, readable=readable)
    embedder = shared_embedder(model)
    whole = "word " * (cap // 2)  # a tool result twice as long as any pieces can hold
    cut = recording.cut(embedder, "Title", whole, "markdown")
    assert seen == [cap]
    assert cut == pieces.cut(embedder, "Title", whole[:cap])
    assert len(cut) == pieces.most


LOG = "[INFO]: server started on port 8080\n[WARN]: cache miss rate 0.4\n"


def test_markup_rules_apply_to_markdown_and_html_only() -> None:
    embedding = RULES.view("semantic").embedding
    code = "const it = {\n[Symbol.iterator]: function* () {\n"
    for content_type in ("log", "code", "plaintext", "json", None):
        assert embedding.without_unseen(LOG, content_type) == LOG
        assert embedding.without_unseen("a <!-- b --> c", content_type) == "a <!-- b --> c"
    assert embedding.without_unseen(code, "code") == code
    for content_type in ("markdown", "html"):
        assert embedding.without_unseen("a <!-- b --> c", content_type) == "a  c"
        # a link definition is a destination and an optional title, nothing else on the line
        assert embedding.without_unseen(LOG, content_type) == LOG
        assert embedding.without_unseen(code, content_type) == code
        for definition in ("[ICU]: http://site.icu-project.org/", "[foo]: <a b> 'title'"):
            assert embedding.without_unseen(f"x\n{definition}\ny", content_type) == "x\n\ny"


def test_the_content_types_of_the_unseen_rules_are_part_of_the_vector_version() -> None:
    from capy.rules.views.base import with_fields

    pack = RULES.view("semantic")
    model = pack.model()
    assert model is not None
    first, *rest = pack.embedding.unseen
    wider = with_fields(first, content_types=(*first.content_types, "log"))
    other = with_fields(pack, embedding=with_fields(pack.embedding, unseen=(wider, *rest)))
    assert pack.vector_version(model) != other.vector_version(model)


@needs_model
def test_a_log_chunk_keeps_its_lines_in_what_the_model_reads() -> None:
    from capy.bench.scratch import scratch_store
    from capy.semantic.embedder import shared_embedder
    from capy.semantic.knowledge import pieces_for
    from capy.semantic.service import index_now
    from capy.store.indexing import index_content

    model, pieces = pieces_for(RULES)
    embedder = shared_embedder(model)
    assert "server started" in pieces.cut(embedder, None, LOG, "log")[0]
    assert pieces.cut(embedder, None, "<!-- a draft -->\n", "markdown") == []
    assert "<!-- a draft -->" in pieces.cut(embedder, None, "<!-- a draft -->\n", None)[0]
    with scratch_store() as store:  # the store hands each chunk's content type to the cut
        index_content(store, LOG * 3, label="server.log", kind="durable", rules=RULES)
        index_content(store, "<!-- a draft -->\n", label="n.md", kind="durable", rules=RULES)
        index_now(store, RULES)
        vectors = dict(
            store.conn.execute(
                "SELECT s.content_type, count(v.chunk_id) FROM sources AS s "
                "LEFT JOIN chunk_vectors AS v ON v.source_id = s.id GROUP BY s.id"
            ).fetchall()
        )
    assert vectors["log"] >= 1
