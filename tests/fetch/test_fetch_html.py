"""HTML conversion against the shipped packs: main content only, landmarks and site headers
dropped, article headers and permalink text kept, charsets read the way browsers read them."""

from __future__ import annotations

import pytest

from capy.fetch.charset import decode_body
from capy.fetch.html import html_to_markdown


@pytest.fixture(scope="module")
def convert():
    from capy.rules.ruleset import build_ruleset

    rules = build_ruleset(include_shipped=True)
    drop = rules.view("chunking").html.drop_elements
    chrome = rules.view("security").fetch.page_chrome

    def run(html: str):
        return html_to_markdown(html, drop_elements=drop, chrome=chrome)

    return run


def test_only_the_marked_main_content_is_kept(convert):
    page = convert(
        "<html><head><title>Tool Book</title></head><body>"
        "<div class='menu-bar'><h1>Tool Book</h1><button>Theme</button></div>"
        "<div id='help'><h2>Keyboard shortcuts</h2></div>"
        "<main><h1 id='usage'><a class='header' href='#usage'>Usage</a></h1>"
        "<p>Call <code>tool run</code> with a <a href='https://example.com/cfg'>config</a>.</p>"
        "</main></body></html>"
    )
    assert page.title == "Tool Book"
    assert page.markdown.startswith("# Usage\n")  # permalink unwrapped, chrome around main gone
    assert "Keyboard shortcuts" not in page.markdown and "Theme" not in page.markdown
    assert "[config](https://example.com/cfg)" in page.markdown  # real links stay


def test_without_a_main_element_landmarks_and_site_headers_are_dropped(convert):
    page = convert(
        "<html><head><title>Blog</title><meta name='x' content='meta text'></head><body>"
        "<header>Site header banner</header>"
        "<div role='navigation'>Landmark menu</div><div role='search'>Search box</div>"
        "<article><header><h1>Post title</h1><p>by the author</p></header>"
        "<p>Post body text.</p></article>"
        "<div role='dialog'>Cookie consent</div></body></html>"
    )
    text = page.markdown
    assert "# Post title" in text and "by the author" in text and "Post body text." in text
    for chrome in ("Site header banner", "Landmark menu", "Search box", "Cookie consent"):
        assert chrome not in text
    assert "meta text" not in text and "Blog" not in text  # the head is not content


def test_a_page_with_two_main_elements_is_kept_whole(convert):
    page = convert("<body><main><p>first part</p></main><main><p>second part</p></main></body>")
    assert "first part" in page.markdown and "second part" in page.markdown


@pytest.mark.parametrize(
    ("body", "content_type", "is_html", "expected"),
    [
        ("café".encode(), "text/plain; charset=utf-8", False, "café"),
        ("café".encode("latin-1"), "text/plain; charset=ISO-8859-1", False, "café"),
        (b"\x93quoted\x94", "text/html; charset=iso-8859-1", True, "\u201cquoted\u201d"),
        (
            "<meta charset='windows-1251'>Привет".encode("cp1251"),
            "text/html",
            True,
            "<meta charset='windows-1251'>Привет",
        ),
        (b"\xef\xbb\xbfBOM wins", "text/plain; charset=latin-1", False, "BOM wins"),
        (b"ok", "text/plain; charset=no-such-charset", False, "ok"),
        (b"bad \xff byte", "text/plain", False, "bad \ufffd byte"),
    ],
)
def test_charsets_are_read_as_browsers_read_them(body, content_type, is_html, expected):
    assert decode_body(body, content_type, is_html=is_html) == expected
