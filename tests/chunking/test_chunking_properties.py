"""Hypothesis: whatever the text and content type, chunks are bounded, non-empty, titled, and
every non-blank line survives; JSON values survive re-serialisation."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.chunking import chunk_text
from capy.rules.views.chunking import ContentType

# Lines that exercise every chunker's structure: headings, fences, log levels, definitions,
# diff and CSV shapes, blank lines, plus arbitrary unicode (NULs and emoji included).
STRUCTURED = st.sampled_from(
    [
        "# Title",
        "## Section two",
        "Heading",
        "=======",
        "```python",
        "~~~",
        "```",
        "",
        "",
        "2026-01-05 10:00:02 ERROR database is locked",
        "Traceback (most recent call last):",
        "ValueError: bad input",
        "def search(query):",
        "    return []",
        "class Store:",
        "diff --git a/x.py b/x.py",
        "--- a/x.py",
        "+++ b/x.py",
        "@@ -1,3 +1,4 @@ def f():",
        "+added",
        "-removed",
        "id,name,email",
        '{"level": "error", "msg": "boom"}',
        "[",
        "{",
    ]
)
FREE = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
LINES = st.lists(st.one_of(STRUCTURED, FREE), max_size=120)
KINDS = st.sampled_from(["auto"] + [t.value for t in ContentType if t is not ContentType.HTML])
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PROPERTY_SETTINGS
@given(lines=LINES, kind=KINDS, crlf=st.booleans(), label=st.sampled_from(["", "out.md", "x.py"]))
def test_no_line_is_lost_and_chunks_are_bounded(rules, checks, lines, kind, crlf, label):
    text = ("\r\n" if crlf else "\n").join(lines)
    chunks = chunk_text(text, content_type=kind, label=label, rules=rules)
    checks.well_formed(chunks)
    if kind == "json" or (kind == "auto" and _parses(text)):
        return  # valid JSON is re-serialised; its values are checked below
    checks.lines_kept(text, chunks)


def _parses(text: str) -> bool:
    try:
        json.loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return False
    return True


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=200),
    lambda children: (
        st.lists(children, max_size=30)
        | st.dictionaries(st.text(max_size=20), children, max_size=20)
    ),
    max_leaves=400,
)


@PROPERTY_SETTINGS
@given(value=JSON_VALUES, indent=st.sampled_from([None, 2]))
def test_json_leaves_survive(rules, checks, value, indent):
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    chunks = chunk_text(text, content_type="json", rules=rules)
    checks.well_formed(chunks)
    everything = "\n".join(c.content for c in chunks)
    titles = "\n".join(c.title for c in chunks)
    for leaf in _string_leaves(value):
        assert json.dumps(leaf, ensure_ascii=False) in everything
    # A key over an oversized value names the chunks below it: it is in their titles, or, where
    # a long path gets clipped, on the first line of their content.
    for key in _keys(value):
        in_title = " ".join(key.split()) in titles
        assert json.dumps(key, ensure_ascii=False) in everything or key in everything or in_title


def _string_leaves(value):
    if isinstance(value, dict):
        for member in value.values():
            yield from _string_leaves(member)
    elif isinstance(value, list):
        for item in value:
            yield from _string_leaves(item)
    elif isinstance(value, str):
        yield value


def _keys(value):
    if isinstance(value, dict):
        for key, member in value.items():
            yield key
            yield from _keys(member)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)
