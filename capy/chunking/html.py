"""HTML: drop the elements that carry no content (scripts, styles, navigation), convert the rest
to markdown with markdownify, and chunk that. Dropped elements are the one place text is lost on
purpose. bs4 and markdownify load only when HTML arrives, keeping hook start-up lean."""

from __future__ import annotations

from capy.rules.views.chunking import ChunkingPack


def html_to_text(text: str, rules: ChunkingPack) -> str | None:
    """The page as markdown, or None when the HTML cannot be converted (the caller falls back)."""
    try:
        from bs4 import BeautifulSoup
        from markdownify import MarkdownConverter

        soup = BeautifulSoup(text, "html.parser")
        for element in soup.find_all(list(rules.html.drop_elements)):
            element.decompose()
    except (RecursionError, ValueError, TypeError, AssertionError, AttributeError):
        return None
    try:
        converted = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    except (RecursionError, ValueError, TypeError, AssertionError, AttributeError):
        # markdownify recurses once per element; thousands of nested divs exhaust the stack.
        # The page's text, one block per line, is still worth indexing.
        try:
            converted = soup.get_text("\n")
        except RecursionError:
            return None
    # markdownify leaves runs of blank lines where block elements were; three or more say nothing.
    lines = [line.rstrip() for line in converted.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")
