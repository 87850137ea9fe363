"""Re-chunking stale sources from their stored raw content when the rules hash changes."""

from __future__ import annotations

from indexing_helpers import (
    block_rowids,
    chunks_of,
    expected_vocabulary,
    source_row,
    trigram_finds,
    trigram_rowids,
    vocabulary,
)

from capy.store import chunk_rowid_range
from capy.store.codec import compress_text, decompress_text
from capy.store.indexing import ensure_fresh, index_content, reindex_stale, stale_count

DOC = "# Guide\n\nThe widget frobnicates.\n\n## Details\n\nMore about quokkas here.\n"
TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"


def make_stale(store, version: str = "0000older0000000") -> None:
    """What a rules change looks like to the store: chunks built under another hash."""
    store.conn.execute("UPDATE sources SET index_version = ?", (version,))
    store.conn.execute("UPDATE meta SET value = ? WHERE key = 'index_version'", (version,))


def scramble_chunks(store, source_id: int) -> None:
    """Replace the chunks with ones the current rules would never make, to see them rebuilt."""
    store.conn.execute(
        "UPDATE chunks SET content = 'stale words' WHERE source_id = ?", (source_id,)
    )
    first, last = chunk_rowid_range(source_id)
    store.conn.execute(  # an index only: a row is replaced whole
        "UPDATE chunks_trigram SET title = '', content = 'stale words' WHERE rowid BETWEEN ? AND ?",
        (first, last),
    )


def test_stale_sources_are_rebuilt_from_raw(store, rules) -> None:
    result = index_content(store, DOC, label="guide.md", rules=rules)
    fresh_chunks = chunks_of(store, result.source_id)
    index_content(store, "Another source about wombats.", label="other", rules=rules)
    scramble_chunks(store, result.source_id)
    make_stale(store)
    assert stale_count(store, rules) == 2
    seen = []
    rebuilt = reindex_stale(
        store, rules=rules, progress=lambda done, total: seen.append((done, total))
    )
    assert rebuilt == 2
    assert seen[-1] == (2, 2)
    assert chunks_of(store, result.source_id) == fresh_chunks
    assert trigram_rowids(store, result.source_id) == block_rowids(row[0] for row in fresh_chunks)
    assert trigram_finds(store, result.source_id, "stale words") == []
    assert trigram_finds(store, result.source_id, "quokka")
    assert stale_count(store, rules) == 0
    assert source_row(store, "guide.md")["index_version"] == rules.index_version
    meta = store.conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    assert meta == (rules.index_version,)


def test_nothing_stale_is_nothing_to_do(store, rules) -> None:
    index_content(store, DOC, label="guide.md", rules=rules)
    assert reindex_stale(store, rules=rules) == 0


def test_force_rebuilds_everything(store, rules) -> None:
    result = index_content(store, DOC, label="guide.md", rules=rules)
    fresh = chunks_of(store, result.source_id)
    scramble_chunks(store, result.source_id)
    assert reindex_stale(store, rules=rules, force=True) == 1
    assert chunks_of(store, result.source_id) == fresh


def test_limit_takes_the_oldest_first(store, rules) -> None:
    for number in range(5):
        index_content(store, f"source number {number} text", label=f"s{number}", rules=rules)
    make_stale(store)
    assert reindex_stale(store, rules=rules, limit=2) == 2
    assert stale_count(store, rules) == 3
    assert source_row(store, "s0")["index_version"] == rules.index_version
    assert source_row(store, "s4")["index_version"] != rules.index_version


def test_a_secret_missed_by_older_rules_is_redacted_on_reindex(store, rules) -> None:
    """The hash covers the secrets pack: a stale source is re-redacted, raw and hash too."""
    result = index_content(store, "deploy notes\n", label="notes", rules=rules)
    leaked = f"deploy notes\ntoken {TOKEN}\n"
    store.conn.execute(
        "UPDATE sources SET raw = ?, raw_size = ?, content_hash = 'older' WHERE id = ?",
        (compress_text(leaked), len(leaked), result.source_id),
    )
    make_stale(store)
    assert reindex_stale(store, rules=rules) == 1
    row = source_row(store, "notes")
    assert TOKEN not in decompress_text(row["raw"])
    assert "[REDACTED:secrets.github-pat]" in decompress_text(row["raw"])
    assert row["content_hash"] != "older" and row["raw_size"] == len(decompress_text(row["raw"]))
    assert TOKEN not in " ".join(chunk[2] for chunk in chunks_of(store, result.source_id))


def test_vocabulary_follows_the_rebuilt_chunks(store, rules) -> None:
    index_content(store, DOC, label="guide.md", rules=rules)
    index_content(store, f"notes\ntoken {TOKEN}\n", label="notes", rules=rules)
    make_stale(store)
    reindex_stale(store, rules=rules)
    assert vocabulary(store) == expected_vocabulary(store)


def test_ensure_fresh_rebuilds_a_small_backlog(store, rules) -> None:
    index_content(store, DOC, label="guide.md", rules=rules)
    make_stale(store)
    assert ensure_fresh(store, rules) == 1
    assert stale_count(store, rules) == 0


def test_ensure_fresh_leaves_a_large_backlog_and_says_so(store, rules) -> None:
    for number in range(3):
        index_content(store, f"text {number}", label=f"s{number}", rules=rules)
    make_stale(store)
    told = []
    assert ensure_fresh(store, rules, max_auto=2, notify=told.append) == 0
    assert stale_count(store, rules) == 3
    assert told == [
        "3 sources were indexed with older rules; run `capy reindex` to rebuild them "
        "(search still uses their older chunks until then)"
    ]


def test_ensure_fresh_records_the_version_of_an_empty_store(store, rules) -> None:
    assert ensure_fresh(store, rules) == 0
    meta = store.conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    assert meta == (rules.index_version,)


def test_a_real_rules_change_marks_sources_stale(store, rules, overlay) -> None:
    text = "\n".join(f"line {number} of a plain text guide" for number in range(400))
    index_content(store, text, label="guide.txt", content_type="plaintext", rules=rules)
    changed = overlay("chunking", "plaintext:\n  window_lines: 10\n  overlap_lines: 2\n")
    assert changed.index_version != rules.index_version
    assert stale_count(store, changed) == 1
    before = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert reindex_stale(store, rules=changed) == 1
    after = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert after > before  # smaller chunks, more of them
    assert stale_count(store, changed) == 0
