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


# An abstract as the classic test collections print it: sentences wrapped at a fixed width.
ABSTRACT_WORDS = (
    "the measurement of heat transfer to a flat plate in supersonic flow is described for "
    "a range of mach numbers and wall temperatures, and the results are compared with the "
    "predictions of the reference enthalpy method. agreement is good when the boundary layer "
    "is laminar, but transition moves upstream as the wall is cooled, and the turbulent "
    "heating rates then exceed the estimates by as much as thirty percent. a correlation of "
    "the transition reynolds number with the ratio of wall to recovery temperature is "
    "proposed, and its use in the design of cooled surfaces is discussed together with the "
    "limits of the experiments on which it rests. "
)


def _wrapped(text: str, width: int = 60) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def test_short_wrapped_prose_is_one_chunk(rules):
    text = _wrapped(ABSTRACT_WORDS * 2)
    assert text.count("\n") + 1 > rules.plaintext.window_lines  # windows would split it
    (chunk,) = chunk_text(text, label="abstract.txt", content_type="plaintext", rules=rules)
    assert chunk.content == text
    assert chunk.title == f"abstract.txt (lines 1-{text.count(chr(10)) + 1})"


def test_prose_over_the_whole_limit_keeps_line_windows(rules):
    text = _wrapped(ABSTRACT_WORDS * 8)
    assert len(text.encode()) > rules.plaintext.prose.whole_max_bytes
    chunks = chunk_text(text, label="long.txt", content_type="plaintext", rules=rules)
    assert len(chunks) > 1


def test_a_line_per_utterance_is_not_wrapped_prose(rules):
    # Every line ends a sentence: a chat log, where windows keep each answer small.
    turns = [f"Speaker {i % 2}: I went to the lake on day {i} and we talked." for i in range(30)]
    chunks = chunk_text("\n".join(turns), label="chat.txt", content_type="plaintext", rules=rules)
    assert len(chunks) > 1


def test_listings_are_not_prose(rules):
    from capy.chunking.prose import reads_as_prose

    listing = [f"-rw-r--r-- 1 dev dev {i * 137} Mar  3 10:{i:02d} file_{i}.py" for i in range(30)]
    assert not reads_as_prose(listing, rules.plaintext.prose)
    # Lines of words without the function words sentences hold: a linter's findings.
    lint = [
        f"  {i}:9  error  Assignment to function parameter 'options'  no-param-reassign"
        for i in range(30)
    ]
    assert not reads_as_prose(lint, rules.plaintext.prose)
    assert reads_as_prose(_wrapped(ABSTRACT_WORDS).split("\n"), rules.plaintext.prose)
