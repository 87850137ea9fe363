"""`index_content`: dedup, touch, replace, both FTS tables, vocabulary, kinds and bad input."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from indexing_helpers import (
    block_rowids,
    chunks_of,
    expected_vocabulary,
    source_row,
    trigram_finds,
    trigram_rowids,
    vocabulary,
)

from capy.store.codec import decompress_text
from capy.store.content import ContentError
from capy.store.indexing import IndexResult, index_content

DOC = "# Install\n\nRun the installer with the frobnicate flag.\n\n## Usage\n\nCall capy search.\n"


def test_new_content_is_indexed(store, rules) -> None:
    result = index_content(store, DOC, label="README.md", rules=rules)
    assert result == IndexResult(
        source_id=result.source_id,
        label="README.md",
        kind="durable",
        content_type="markdown",
        chunk_count=result.chunk_count,
        bytes=len(DOC.encode()),
        status="indexed",
        redactions={},
    )
    row = source_row(store, "README.md")
    assert decompress_text(row["raw"]) == DOC
    assert row["raw_size"] == len(DOC.encode())
    assert row["index_version"] == rules.index_version
    assert row["expires_at"] is None and row["access_count"] == 0
    meta = store.conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    assert meta == (rules.index_version,)


def test_chunks_land_in_both_tables_with_the_same_rowids(store, rules) -> None:
    result = index_content(store, DOC, label="README.md", rules=rules)
    porter = chunks_of(store, result.source_id)
    assert trigram_rowids(store, result.source_id) == block_rowids(row[0] for row in porter)
    assert trigram_finds(store, result.source_id, "robnicat") == block_rowids(
        row[0] for row in porter if "robnicat" in f"{row[1]} {row[2]}".lower()
    )
    assert len(porter) == result.chunk_count >= 1
    assert [row[4] for row in porter] == list(range(len(porter)))
    assert all(row[3] == result.source_id for row in porter)
    assert "frobnicate" in " ".join(row[2] for row in porter)


def test_same_content_again_only_touches(store, rules) -> None:
    first = index_content(store, DOC, label="README.md", rules=rules)
    before = source_row(store, "README.md")
    store.conn.execute(
        "UPDATE sources SET accessed_at = NULL, indexed_at = 1 WHERE id = ?", (first.source_id,)
    )
    again = index_content(store, DOC.encode(), label="README.md", rules=rules)
    after = source_row(store, "README.md")
    assert again.status == "unchanged"
    assert (again.source_id, again.chunk_count) == (first.source_id, first.chunk_count)
    assert after["indexed_at"] == 1  # not rewritten
    assert after["accessed_at"] >= before["indexed_at"]
    assert after["raw"] == before["raw"]


def test_new_content_under_the_same_label_replaces(store, rules) -> None:
    first = index_content(store, DOC, label="notes", rules=rules)
    store.conn.execute("UPDATE sources SET access_count = 3 WHERE id = ?", (first.source_id,))
    second = index_content(
        store, "Completely different words: zyzzyva quokka.", label="notes", rules=rules
    )
    assert (second.status, second.source_id) == ("replaced", first.source_id)
    contents = " ".join(row[2] for row in chunks_of(store, first.source_id))
    assert "zyzzyva" in contents and "frobnicate" not in contents
    assert trigram_rowids(store, first.source_id) == block_rowids(
        row[0] for row in chunks_of(store, first.source_id)
    )
    assert trigram_finds(store, first.source_id, "frobnicate") == []
    assert source_row(store, "notes")["access_count"] == 3  # history survives a rewrite
    assert "frobnicate" not in vocabulary(store)
    assert vocabulary(store) == expected_vocabulary(store)


def test_an_explicit_content_type_change_rechunks(store, rules) -> None:
    index_content(store, DOC, label="doc", rules=rules)
    result = index_content(store, DOC, label="doc", content_type="plaintext", rules=rules)
    assert (result.status, result.content_type) == ("replaced", "plaintext")


def test_kinds_are_separate_sources(store, rules) -> None:
    durable = index_content(store, DOC, label="same", rules=rules)
    ephemeral = index_content(store, DOC, label="same", kind="ephemeral", rules=rules)
    assert durable.source_id != ephemeral.source_id
    assert ephemeral.status == "indexed"


@pytest.mark.parametrize(("kind", "ttl_hours"), [("ephemeral", 24), ("session", 1440)])
def test_expiry_follows_the_kind_ttl(store, rules, kind, ttl_hours) -> None:
    before = int(time.time())
    index_content(store, DOC, label="out", kind=kind, rules=rules)
    row = source_row(store, "out", kind)
    assert before + ttl_hours * 3600 <= row["expires_at"] <= int(time.time()) + ttl_hours * 3600


def test_secrets_never_reach_the_store(store, rules) -> None:
    token = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
    result = index_content(store, f"export GITHUB_TOKEN={token}\nok\n", label="env", rules=rules)
    assert result.redactions == {"secrets.github-pat": 1}
    row = source_row(store, "env")
    assert token not in decompress_text(row["raw"])
    assert token not in " ".join(row[2] for row in chunks_of(store, result.source_id))
    assert trigram_finds(store, result.source_id, token[4:20]) == []
    assert not any(term in token.lower() for term in vocabulary(store) if len(term) > 12)


def test_vocabulary_counts_words_of_three_to_forty_characters(store, rules) -> None:
    long_word = "a" * 41
    text = f"Ab abc ABC café_au_lait max_chunk_bytes {long_word} 12345"
    index_content(store, text, label="v", rules=rules)
    vocab = vocabulary(store)
    assert vocab["abc"] >= 2 and vocab["café"] >= 1 and vocab["lait"] >= 1 and vocab["12345"] >= 1
    # Identifiers count by their parts, as unicode61 splits them, so a typo in one part of
    # `max_chunk_bytes` can be corrected; "au" and "ab" are too short to be worth correcting.
    assert vocab["max"] >= 1 and vocab["chunk"] >= 1 and vocab["bytes"] >= 1
    assert "max_chunk_bytes" not in vocab and "café_au_lait" not in vocab and "au" not in vocab
    assert "ab" not in vocab and long_word not in vocab
    assert vocab == expected_vocabulary(store)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"label": ""}, "a source needs a label"),
        ({"label": "x", "kind": "forever"}, "unknown source kind 'forever'; use one of durable"),
        ({"label": "x", "content_type": "pdf"}, "unknown content type 'pdf'; use one of auto"),
    ],
)
def test_bad_arguments_are_clear_errors(store, rules, arguments, message) -> None:
    with pytest.raises(ContentError, match=message):
        index_content(store, DOC, rules=rules, **arguments)
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_binary_and_empty_content_store_nothing(store, rules) -> None:
    with pytest.raises(ContentError, match=r"'logo\.png': it looks like binary"):
        index_content(store, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", label="logo.png", rules=rules)
    with pytest.raises(ContentError, match="nothing to index for 'empty'"):
        index_content(store, b"", label="empty", rules=rules)
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)


def test_invalid_utf8_is_indexed_with_replacement(store, rules) -> None:
    result = index_content(
        store, b"r\xe9sum\xe9 of the build: \xff ok\n" * 20, label="latin1", rules=rules
    )
    assert result.status == "indexed"
    assert "\ufffd" in decompress_text(source_row(store, "latin1")["raw"])


def test_two_megabytes_on_one_line(store, rules) -> None:
    content = " ".join(f"tok{n}" for n in range(300_000))[:2_000_000] + " needleword"
    assert "\n" not in content and len(content) > 2_000_000
    started = time.perf_counter()
    result = index_content(store, content, label="one-line", rules=rules)
    assert result.status == "indexed" and result.chunk_count > 1
    assert time.perf_counter() - started < 60
    chunks = chunks_of(store, result.source_id)
    assert "needleword" in chunks[-1][2]
    assert max(len(row[2].encode()) for row in chunks) <= 2 * rules.view("chunking").max_chunk_bytes


def test_over_the_cap_is_refused_when_the_pack_rejects(store, overlay) -> None:
    rules = overlay("retention", "size:\n  max_source_bytes: 4096\n  on_oversize: reject\n")
    with pytest.raises(ContentError, match=r"'huge.log': 5,000 bytes is over the 4,096-byte cap"):
        index_content(store, "x" * 5000, label="huge.log", rules=rules)
    assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)


words = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]), max_size=30
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), words), min_size=1, max_size=8))
def test_vocabulary_always_matches_the_visible_chunks(store, rules, steps) -> None:
    """Any sequence of indexing and replacing keeps vocabulary == counts of the chunks."""
    for label, body in steps:
        text = " ".join(body) or "placeholder"
        index_content(store, text, label=label, rules=rules)
        assert vocabulary(store) == expected_vocabulary(store)


def test_a_label_holding_a_secret_is_stored_and_looked_up_redacted(store, rules) -> None:
    from capy.store.corpus import search_store
    from capy.store.retention import plan_cleanup

    token = "ghp_" + "a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
    label = f"curl -H 'Authorization: token {token}' https://api.example.com/repos"
    result = index_content(store, "the repository list\n", label=label, rules=rules)
    stored = [row[0] for row in store.conn.execute("SELECT label FROM sources")]
    assert token not in result.label and all(token not in item for item in stored)
    assert result.redactions  # counted like the content's secrets
    again = index_content(store, "the repository list\n", label=label, rules=rules)
    assert again.status == "unchanged"  # the same label finds the same source
    [found] = search_store(store, ["repository"], source=label, rules=rules)
    assert [hit.source_label for hit in found.hits] == [result.label]
    assert [item.label for item in plan_cleanup(store, rules=rules, source=label).items] == [
        result.label
    ]
