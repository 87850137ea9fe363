"""Network guards for fetches: the SSRF check and httpx clients that apply it at connect time.

Names are imported on first use: hooks start a fresh process per tool call, and httpx is not
cheap to import for a hook that never fetches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.lazy import lazy_exports

if TYPE_CHECKING:
    from capy.net.ssrf import AllowList, HostBlocked, SsrfGuard, UrlVerdict, check_url
    from capy.net.transport import (
        SsrfBlockedError,
        async_guarded_client,
        guarded_client,
        project_client,
    )
    from capy.net.urls import ParsedUrl, UrlError, parse_url

_EXPORTS = {
    "AllowList": "capy.net.ssrf",
    "HostBlocked": "capy.net.ssrf",
    "SsrfGuard": "capy.net.ssrf",
    "UrlVerdict": "capy.net.ssrf",
    "check_url": "capy.net.ssrf",
    "SsrfBlockedError": "capy.net.transport",
    "async_guarded_client": "capy.net.transport",
    "guarded_client": "capy.net.transport",
    "project_client": "capy.net.transport",
    "ParsedUrl": "capy.net.urls",
    "UrlError": "capy.net.urls",
    "parse_url": "capy.net.urls",
}

__all__ = [
    "AllowList",
    "HostBlocked",
    "ParsedUrl",
    "SsrfBlockedError",
    "SsrfGuard",
    "UrlError",
    "UrlVerdict",
    "async_guarded_client",
    "check_url",
    "guarded_client",
    "parse_url",
    "project_client",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
