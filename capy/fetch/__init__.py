"""capy's fetch: one URL through the SSRF-guarded client, turned into text worth indexing.

`capy.api.fetch.fetch_and_index` runs many of these, the cache and the indexer; this package
holds the parts that know about HTTP, charsets, HTML and previews. Names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.lazy import lazy_exports

if TYPE_CHECKING:
    from capy.fetch.document import Document, to_document
    from capy.fetch.errors import FetchError, FetchFailure
    from capy.fetch.http import FetchedPage, fetch_page
    from capy.fetch.limits import FetchLimits
    from capy.fetch.requests import FetchRequest

_EXPORTS = {
    "Document": "capy.fetch.document",
    "to_document": "capy.fetch.document",
    "FetchError": "capy.fetch.errors",
    "FetchFailure": "capy.fetch.errors",
    "FetchedPage": "capy.fetch.http",
    "fetch_page": "capy.fetch.http",
    "FetchLimits": "capy.fetch.limits",
    "FetchRequest": "capy.fetch.requests",
}

__all__ = [
    "Document",
    "FetchError",
    "FetchFailure",
    "FetchLimits",
    "FetchRequest",
    "FetchedPage",
    "fetch_page",
    "to_document",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
