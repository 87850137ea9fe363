"""Plain text (paragraphs or windows) and CSV (header repeated per batch)."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_paragraph_chunks_with_line_range_titles(chunk, checks, fixture_text):
    chunks = chunk("postmortem.txt")
    checks.lines_kept(fixture_text("postmortem.txt"), chunks)
    (timeline,) = checks.containing(chunks, "14:49  rollback complete")
    assert timeline.title == "postmortem.txt (lines 13-19)"
    assert timeline.content.startswith("Timeline\n\n14:02")  # the lone header merged forward


def test_unsectioned_text_uses_overlapping_windows(chunk, rules):
    chunks = chunk("listing.txt")
    window, overlap = rules.plaintext.window_lines, rules.plaintext.overlap_lines
    assert chunks[0].title == f"listing.txt (lines 1-{window})"
    assert chunks[1].title == f"listing.txt (lines {window - overlap + 1}-{2 * window - overlap})"
    first, second = chunks[0].content.splitlines(), chunks[1].content.splitlines()
    assert first[-overlap:] == second[:overlap]


def test_long_label_is_clipped_but_keeps_the_line_range(rules):
    label = "python -m pytest -v --maxfail=1 " + "tests/very/long/path/" * 6
    chunks = chunk_text("\n".join(f"row {n}" for n in range(30)), label=label, rules=rules)
    assert chunks[0].title.endswith("… (lines 1-20)")
    assert len(chunks[0].title) <= rules.titles.max_chars


def test_csv_repeats_the_header(chunk, checks, fixture_text, rules):
    chunks = chunk("orders.csv")
    header = fixture_text("orders.csv").splitlines()[0]
    assert all(c.content.splitlines()[0] == header for c in chunks)
    assert [len(c.content.splitlines()) - 1 for c in chunks][:-1] == [rules.csv.rows_per_chunk] * 3
    (row,) = checks.containing(chunks, "customer-kestrel")
    assert row.title == "orders.csv (lines 102-151)"
    checks.lines_kept(fixture_text("orders.csv"), chunks)
