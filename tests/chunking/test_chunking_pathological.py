"""Inputs that have broken chunkers elsewhere: none may raise, and the bounds still hold."""

from __future__ import annotations

import json

import pytest

from capy.chunking import chunk_text, detect_content_type
from capy.rules.views.chunking import ContentType

ALL_TYPES = ["auto"] + [t.value for t in ContentType]


@pytest.mark.parametrize("kind", ALL_TYPES)
def test_two_megabyte_single_line(kind, rules, checks):
    text = " ".join(f"token{n}" for n in range(260_000))[: 2 * 1024 * 1024]
    chunks = chunk_text(text, content_type=kind, rules=rules)
    checks.well_formed(chunks)
    if kind not in ("html",):
        assert "".join(c.content for c in chunks).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize("kind", ["auto", "plaintext", "log", "markdown", "code"])
def test_ten_megabytes_of_one_character(kind, rules, checks):
    text = "a" * (10 * 1024 * 1024)
    chunks = chunk_text(text, content_type=kind, rules=rules)
    checks.well_formed(chunks)
    assert sum(len(c.content) for c in chunks) == len(text)


@pytest.mark.parametrize("kind", ALL_TYPES)
def test_binary_looking_text_with_nuls(kind, rules, checks):
    text = bytes(range(256)).decode("latin-1") * 200 + "\x00\x00\ufffd\n" * 50
    checks.well_formed(chunk_text(text, content_type=kind, rules=rules))
    assert detect_content_type(text, rules) in {t.value for t in ContentType}


def test_multibyte_text_is_never_cut_inside_a_character(rules, checks):
    text = "日本語のテキスト🙂" * 5000
    chunks = chunk_text(text, rules=rules)
    checks.well_formed(chunks)
    assert "".join(c.content for c in chunks) == text


def test_deeply_nested_json(rules, checks):
    for depth in (50, 5000, 200_000):
        text = "[" * depth + "]" * depth
        checks.well_formed(chunk_text(text, content_type="json", rules=rules))
    nested = {"k": "v" * 5000}
    for n in range(40):
        nested = {f"level{n}": nested, "pad": "p" * 200}
    chunks = chunk_text(json.dumps(nested), rules=rules)
    checks.well_formed(chunks)
    assert "v" * 100 in "".join(c.content for c in chunks)


@pytest.mark.parametrize("text", ["```", "```\n```\n```", "~~~~\n# a\n```\n", "# \n#\n###### x"])
def test_unbalanced_and_empty_fences_and_headings(text, rules, checks):
    chunks = chunk_text(text, content_type="markdown", rules=rules)
    checks.well_formed(chunks)
    checks.lines_kept(text, chunks)


@pytest.mark.parametrize("kind", ALL_TYPES)
def test_crlf_line_endings(kind, rules, checks, fixture_text):
    text = fixture_text("guide.md").replace("\n", "\r\n")
    chunks = chunk_text(text, content_type=kind, label="guide.md", rules=rules)
    checks.well_formed(chunks)
    assert all("\r" not in c.content for c in chunks)
    if kind != "html":
        checks.lines_kept(text, chunks)


@pytest.mark.parametrize("text", ["", " ", "\n\n\n", "\r\n", "\ufeff", "\t \n \t"])
def test_blank_input_gives_no_chunks(text, rules):
    assert chunk_text(text, rules=rules) == []


def test_broken_html_and_html_that_is_all_chrome(rules, checks):
    for text in ("<html><body><div><p>unclosed <b>bold", "<html><script>x()</script></html>"):
        checks.well_formed(chunk_text(text, rules=rules))
    deep = "<html><body>" + "<div>" * 3000 + "deep text" + "</div>" * 3000 + "</body></html>"
    chunks = chunk_text(deep, rules=rules)
    checks.well_formed(chunks)
    assert any("deep text" in c.content for c in chunks)


def test_malformed_diff_counts(rules, checks):
    text = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,999 +1,999 @@\n line\n+new\nstray\n@@ bad @@\n"
    )
    chunks = chunk_text(text, rules=rules)
    checks.well_formed(chunks)
    checks.lines_kept(text, chunks)
