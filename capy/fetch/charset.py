"""Bytes to text the way browsers pick an encoding: byte-order mark, then the Content-Type
charset, then (for HTML) a <meta> charset near the top, then UTF-8. Undecodable bytes become
U+FFFD rather than failing the fetch: a page with one bad byte is still worth indexing."""

from __future__ import annotations

import codecs
import re

# Browsers look for <meta charset> in the first 1024 bytes; some pages put it a little later.
META_SCAN_BYTES = 4096
_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.IGNORECASE
)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9._:-]{1,40})""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
DEFAULT_ENCODING = "utf-8"


def decode_body(body: bytes, content_type: str, *, is_html: bool) -> str:
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    encoding = _known(_header_charset(content_type))
    if encoding is None and is_html:
        match = _META_CHARSET.search(body[:META_SCAN_BYTES])
        encoding = _known(match.group(1).decode("ascii") if match else None)
        # A <meta> readable as ASCII means the page is not UTF-16, whatever it says (WHATWG).
        if encoding is not None and encoding.startswith("utf-16"):
            encoding = DEFAULT_ENCODING
    return body.decode(encoding or DEFAULT_ENCODING, errors="replace")


def _header_charset(content_type: str) -> str | None:
    match = _HEADER_CHARSET.search(content_type)
    return match.group(1) if match else None


def _known(name: str | None) -> str | None:
    """A Python codec for a declared charset; None for one Python does not know."""
    if not name:
        return None
    try:
        codec = codecs.lookup(name)
    except LookupError:
        return None
    # WHATWG: pages labelled latin-1 or ascii are decoded as windows-1252 by every browser,
    # and authors write them for browsers (curly quotes in 0x80-0x9F are common).
    if codec.name in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    return codec.name
