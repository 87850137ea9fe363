"""Markdown: heading stacks, fences never split, oversized sections, tiny sections merged."""

from __future__ import annotations

import itertools

from capy.chunking import chunk_text


def test_heading_stack_titles(chunk, fixture_text, snapshot, checks):
    chunks = chunk("guide.md")
    assert [c.title for c in chunks] == snapshot
    checks.lines_kept(fixture_text("guide.md"), chunks)


def test_h5_stays_in_its_parent_and_comment_in_fence_is_not_a_heading(chunk, checks):
    chunks = chunk("guide.md")
    (fine_print,) = checks.containing(chunks, "##### Fine print")
    assert fine_print.title == "kestrel > Configuration > Tasks > Environment"
    (tasks,) = checks.containing(chunks, "# Not a heading")
    assert tasks.title == "kestrel > Configuration > Tasks"
    assert "```toml" in tasks.content and tasks.content.count("```") == 2


def test_lone_heading_merges_into_its_first_subsection(chunk, checks):
    chunks = chunk("guide.md")
    (configuration,) = checks.containing(chunks, "## Configuration")
    assert configuration.title == "kestrel > Configuration > Tasks"


def test_setext_headings(chunk, checks):
    (ci,) = checks.containing(chunk("guide.md"), "Cache misses on CI\n---")
    assert ci.title == "Troubleshooting > Cache misses on CI"


def test_oversized_section_splits_at_paragraphs_with_overlap(chunk, rules):
    codes = [c for c in chunk("reference.md") if c.title == "Reference > Error codes"]
    assert len(codes) >= 2
    for previous, following in itertools.pairwise(codes):
        # The next piece opens with the tail of the previous one, within overlap_bytes.
        last_paragraph = previous.content.rsplit("\n\n", 1)[-1]
        assert following.content.startswith(last_paragraph)
        assert len(last_paragraph.encode()) <= rules.markdown.overlap_bytes


def test_oversized_fence_is_cut_at_lines_and_refenced(chunk, fixture_text):
    pieces = [c for c in chunk("reference.md") if c.title == "Reference > Generated schema"]
    assert len(pieces) >= 2
    for piece in pieces:
        body = piece.content[piece.content.index("```json") :]
        assert body.startswith("```json\n") and body.endswith("\n```")
        assert body.count("```") == 2
    fields = [line for line in fixture_text("reference.md").splitlines() if '"field_' in line]
    seen = [line for piece in pieces for line in piece.content.splitlines() if '"field_' in line]
    assert seen == fields  # every line once, in order, no line cut in half


def test_section_after_a_big_fence_keeps_its_own_title(chunk, checks):
    (after,) = checks.containing(chunk("reference.md"), "kestrel schema --json")
    assert after.title == "Reference > After the fence"


def test_unbalanced_fence_runs_to_the_end(rules):
    text = "# Top\n\nintro\n\n```python\ndef f():\n    pass\n\n# not a heading\n\nmore text\n"
    chunks = chunk_text(text, content_type="markdown", rules=rules)
    assert [c.title for c in chunks] == ["Top"]
    assert "# not a heading" in chunks[0].content


def test_markdown_detected_from_the_label(rules):
    text = (
        "2026-01-05 10:00:01 INFO starting\n2026-01-05 10:00:02 ERROR boom\n\n# Notes\n\n"
        "The deploy on Tuesday failed because the migration ran twice.\n"
    )
    chunks = chunk_text(text, label="notes.md", rules=rules)
    assert chunks[-1].title == "Notes"
