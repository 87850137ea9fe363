"""A fetched response as the text capy indexes: HTML converted to markdown with its title, JSON
kept as JSON (the chunker cuts it by key path), other text as it came.

Text formats get a `URL:` line under their title, so a search hit says where it came from and
the fetch cache can tell which URL a custom-labelled source holds. Formats a line would break
(JSON, CSV, code, diffs) are stored untouched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capy.fetch.charset import decode_body
from capy.fetch.errors import FetchError, FetchFailure
from capy.fetch.html import html_to_markdown
from capy.rules.views.chunking import ContentType

if TYPE_CHECKING:
    from capy.fetch.http import FetchedPage
    from capy.rules import RuleSet

URL_PREFIX = "URL: "
URL_LINE = URL_PREFIX + "{url}"
REDIRECT_LINE = "Redirected to: {url}"
# The URL line sits at most this many lines down (under a one-line title).
URL_LINE_SEARCH_LINES = 3
_MARKED_TYPES = frozenset({ContentType.MARKDOWN, ContentType.PLAINTEXT, ContentType.LOG})


@dataclass(frozen=True)
class Document:
    text: str
    content_type: str  # a ContentType value, for the indexer
    title: str = ""
    converted_from_html: bool = False


def to_document(page: FetchedPage, *, shown_url: str, rules: RuleSet) -> Document:
    """What to index for `page`; `shown_url` is the URL as stored (secrets redacted)."""
    from capy.chunking import detect_content_type

    subtype = page.media_type.rpartition("/")[2]
    declared_html = "html" in subtype
    text = decode_body(page.body, page.content_type, is_html=declared_html or not subtype)
    if not text.strip():
        raise FetchError(FetchFailure.EMPTY, "the server sent an empty body; nothing to index")
    if (subtype == "json" or subtype.endswith("+json")) and _is_json(text):
        return Document(text, ContentType.JSON.value)
    chunking = rules.view("chunking")
    path_hint = page.final_url.split("?", 1)[0].split("#", 1)[0]
    detected = ContentType(detect_content_type(text, chunking, label=path_hint))
    if declared_html or detected is ContentType.HTML:
        return _html_document(text, page, shown_url, rules)
    if detected in _MARKED_TYPES:
        return Document(_with_url_lines(text, "", page, shown_url), detected.value)
    return Document(text, detected.value)


def records_url(text: str, shown_url: str) -> bool:
    """Whether stored text was fetched from `shown_url` (its URL line says so)."""
    head = text.split("\n", URL_LINE_SEARCH_LINES)[:URL_LINE_SEARCH_LINES]
    return URL_LINE.format(url=shown_url) in head


def _html_document(text: str, page: FetchedPage, shown_url: str, rules: RuleSet) -> Document:
    converted = html_to_markdown(
        text,
        drop_elements=rules.view("chunking").html.drop_elements,
        chrome=rules.view("security").fetch.page_chrome,
    )
    if converted is None:  # unparsable: let the chunker make what it can of the raw HTML
        return Document(text, ContentType.HTML.value)
    body = _without_leading_title(converted.markdown, converted.title)
    if not body.strip():
        raise FetchError(
            FetchFailure.EMPTY,
            "the page has no text once scripts, styles and navigation are dropped (it may be "
            "rendered by JavaScript); look for an API or a raw/plain version of it",
        )
    marked = _with_url_lines(body, converted.title, page, shown_url)
    return Document(marked, ContentType.MARKDOWN.value, converted.title, True)


def _with_url_lines(body: str, title: str, page: FetchedPage, shown_url: str) -> str:
    lines = [f"# {title}"] if title else []
    lines.append(URL_LINE.format(url=shown_url))
    if page.final_url != page.url:
        lines.append(REDIRECT_LINE.format(url=page.final_url))
    return "\n".join(lines) + "\n\n" + body


def _without_leading_title(markdown: str, title: str) -> str:
    """Drop the body's first line when it is an H1 repeating the title put above it."""
    first, _, rest = markdown.partition("\n")
    if title and first.strip().lstrip("#").strip() == title and first.startswith("# "):
        return rest.lstrip("\n")
    return markdown


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
