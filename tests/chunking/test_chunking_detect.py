"""Detection: the pack's rules on the content, and the label's extension when given."""

from __future__ import annotations

import pytest

from capy.chunking import chunk_text, detect_content_type

CASES = {
    "guide.md": "markdown",
    "incidents.json": "json",
    "pytest.log": "log",
    "service.log": "log",
    "scheduler.py": "code",
    "lease.go": "code",
    "orders.csv": "csv",
    "docs-page.html": "html",
    "change.diff": "diff",
    "postmortem.txt": "plaintext",
    "listing.txt": "plaintext",
}


@pytest.mark.parametrize(("name", "expected"), sorted(CASES.items()))
def test_detect_content_type(name, expected, rules, fixture_text):
    assert detect_content_type(fixture_text(name), rules) == expected


def test_detect_with_a_label(rules, fixture_text):
    log_like = "2026-01-05 10:00:01 INFO starting\n2026-01-05 10:00:02 ERROR boom\n"
    assert detect_content_type(log_like, rules) == "log"
    assert detect_content_type(log_like, rules, label="docs/notes.md") == "markdown"
    assert detect_content_type(fixture_text("lease.go"), rules, label="pytest -v") == "code"


def test_unknown_content_type_is_a_clear_error(rules):
    with pytest.raises(ValueError, match="unknown content type 'yaml'; use one of: auto, markdown"):
        chunk_text("a: 1", content_type="yaml", rules=rules)


def test_label_beats_content(rules):
    text = '{"looks": "like json"}\n'
    assert chunk_text(text, label="notes.md", rules=rules)[0].title == "notes.md (line 1)"
    assert chunk_text("", label="x.json", rules=rules) == []


def test_content_type_is_case_insensitive(rules):
    assert chunk_text("# Title\n\nSome body text for it.", content_type="Markdown", rules=rules)
