"""HTML (converted to markdown, chrome dropped) and diffs (per file, hunks kept whole)."""

from __future__ import annotations

from capy.chunking import chunk_text


def test_html_becomes_markdown_sections(chunk):
    chunks = chunk("docs-page.html")
    assert [c.title for c in chunks] == [
        "Caching",
        "Caching > Cache location",
        "Caching > Pruning",
        "Caching > Pruning > Remote caches",
    ]
    text = "\n".join(c.content for c in chunks)
    assert "kestrel cache prune --max-mb 256" in text
    for dropped in ("tracking-script-marker", "nav-link-marker", "footer-marker", "font-family"):
        assert dropped not in text


def test_diff_one_chunk_per_file(chunk, checks, fixture_text, snapshot):
    chunks = chunk("change.diff")
    checks.lines_kept(fixture_text("change.diff"), chunks)
    assert [c.title for c in chunks] == snapshot


def test_removed_sql_comment_is_not_a_file_header(chunk):
    (sql,) = [c for c in chunk("change.diff") if c.title == "migrations/0007_segments.sql"]
    assert "--- segments written by the compactor" in sql.content


def test_big_file_is_split_between_hunks_with_the_header_repeated(rules, checks):
    header = "diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt"
    hunks = []
    for n in range(12):
        lines = "\n".join(f"+added line {n}.{k} with some words to fill it" for k in range(12))
        hunks.append(f"@@ -{n * 20},0 +{n * 20},12 @@ def section_{n}():\n{lines}")
    text = header + "\n" + "\n".join(hunks) + "\n"
    chunks = chunk_text(text, rules=rules)
    checks.well_formed(chunks)
    checks.lines_kept(text, chunks)
    assert len(chunks) > 1
    assert all(c.content.startswith(header) for c in chunks)
    assert all(c.title.startswith("big.txt > def section_") for c in chunks)
    for c in chunks:  # hunks are never cut: each @@ is followed by its 12 lines
        assert c.content.count("@@ -") * 12 == c.content.count("\n+added")
