"""Plain text (paragraphs or windows) and CSV (header repeated per batch)."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_paragraph_chunks_titled_by_their_heading(chunk, checks, fixture_text):
    chunks = chunk("postmortem.txt")
    checks.lines_kept(fixture_text("postmortem.txt"), chunks)
    (timeline,) = checks.containing(chunks, "14:49  rollback complete")
    assert timeline.title == "Timeline"
    assert timeline.content.startswith("Timeline\n\n14:02")  # the lone header merged forward
    # Before the first heading, the label and the line range still title a chunk.
    assert chunks[0].title == "postmortem.txt (line 1)"


RFC = """\
Quill Message Framing
=====================

Abstract

   This document specifies a framing layer for ordered, typed messages.

4.  Frame Types

   Every frame carries a type octet; unknown types are ignored.

4.6.  RESET (type=0x5)

   Abruptly terminates one stream. The payload is a 32-bit error code.

5.  Flow Control

   Each side starts with an initial window of 65535 octets per stream.
"""


def test_numbered_sections_build_a_heading_path(rules):
    chunks = chunk_text(RFC, label="draft.txt", content_type="plaintext", rules=rules)
    by_text = {chunk.content.split("\n")[-1].strip(): chunk.title for chunk in chunks}
    title = "Quill Message Framing"
    assert by_text["Abruptly terminates one stream. The payload is a 32-bit error code."] == (
        f"{title} > 4. Frame Types > 4.6. RESET (type=0x5)"
    )
    # A section at the same depth replaces its sibling; the document title stays at the root.
    assert by_text["Each side starts with an initial window of 65535 octets per stream."] == (
        f"{title} > 5. Flow Control"
    )
    # A heading never stands alone: it opens the chunk of the text below it.
    assert all(chunk.content.strip() not in {"4.  Frame Types", "Abstract"} for chunk in chunks)


def test_numbered_list_items_are_not_headings(rules):
    text = "Steps\n\n1. Install the package.\n\n2. Restart the shell.\n\n3. Run the tests.\n"
    chunks = chunk_text(text, label="steps.txt", content_type="plaintext", rules=rules)
    assert {chunk.title for chunk in chunks} == {"Steps"}


def test_unsectioned_text_uses_overlapping_windows(chunk, rules):
    chunks = chunk("listing.txt")
    window, overlap = rules.plaintext.window_lines, rules.plaintext.overlap_lines
    assert chunks[0].title == f"listing.txt (lines 1-{window})"
    assert chunks[1].title == f"listing.txt (lines {window - overlap + 1}-{2 * window - overlap})"
    first, second = chunks[0].content.splitlines(), chunks[1].content.splitlines()
    assert first[-overlap:] == second[:overlap]


def test_long_label_is_clipped_but_keeps_the_line_range(rules):
    label = "python -m pytest -v --maxfail=1 " + "tests/very/long/path/" * rules.titles.max_chars
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
