"""A fetched HTML page as markdown: its main content only, title kept, page chrome dropped.

The chunker can convert HTML too (`capy.chunking.html`), but a fetch needs more from the one
parse it can afford (html.parser takes ~0.4 s on a 100 KB page here): the <title>, the element
the page marks as main content, ARIA landmarks, headers judged by where they sit, permalink
anchors unwrapped, and `data:` images that would otherwise index as base64 noise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules.views.security import PageChrome

_BLANK_RUNS = re.compile(r"\n{3,}")
_SPACES = re.compile(r"\s+")
_CONVERSION_ERRORS = (RecursionError, ValueError, TypeError, AssertionError, AttributeError)


@dataclass(frozen=True)
class ConvertedPage:
    title: str
    markdown: str


def html_to_markdown(
    html: str, *, drop_elements: Iterable[str], chrome: PageChrome
) -> ConvertedPage | None:
    """The page as markdown, or None when it cannot be parsed (the caller falls back)."""
    try:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, "html.parser")
        title = page_title(soup)
        content = _content_root(soup, chrome.content_roots)
        _drop(content.find_all(list(drop_elements)))
        for selector in chrome.drop_selectors:
            _drop(content.select(selector))
        keep = list(chrome.keep_within)
        _drop(
            element
            for element in content.find_all(list(chrome.drop_outside_content))
            if not (keep and element.find_parent(keep))
        )
        _unwrap_page_anchors(content)
        for image in content.find_all("img", src=re.compile(r"^\s*data:", re.IGNORECASE)):
            image.replace_with(image.get("alt") or "")
    except _CONVERSION_ERRORS:
        return None
    body = _convert(content)
    return None if body is None else ConvertedPage(title, tidy(body))


def _content_root(soup, selectors: Iterable[str]):
    """The element the page marks as its main content, else the whole page without its head."""
    for selector in selectors:
        found = soup.select(selector, limit=2)
        if len(found) == 1:
            return found[0]
    # The head holds metadata, never content; its <title> is kept apart as the title.
    _drop(soup.find_all("head"))
    return soup


def _unwrap_page_anchors(content) -> None:
    """Links to the same page (`#section`) are heading permalinks and tables of contents: keep
    their text, drop the link, so headings read `## Usage`, not `## [Usage](#usage)`."""
    for link in content.find_all("a", href=re.compile(r"^#")):
        link.unwrap()


def page_title(soup) -> str:
    """The <title>, else the first <h1>, on one line."""
    for element in (soup.title, soup.find("h1")):
        if element is not None:
            text = _SPACES.sub(" ", element.get_text(" ")).strip()
            if text:
                return text
    return ""


def _drop(elements: Iterable) -> None:
    for element in list(elements):
        if not getattr(element, "decomposed", False):  # already gone with its parent
            element.decompose()


def _convert(soup) -> str | None:
    from markdownify import MarkdownConverter

    try:
        return MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    except _CONVERSION_ERRORS:
        # markdownify recurses once per element; thousands of nested divs exhaust the stack.
        try:
            return soup.get_text("\n")
        except RecursionError:
            return None


def tidy(markdown: str) -> str:
    """Trailing spaces off, runs of blank lines (left where block elements were) cut to one."""
    lines = "\n".join(line.rstrip() for line in markdown.split("\n"))
    return _BLANK_RUNS.sub("\n\n", lines).strip("\n")
