"""One GET through the SSRF-guarded client: status, type and size checked before the body is
kept, the body streamed and cut off at the size limit, the whole fetch under one deadline."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from capy.fetch.errors import FetchError, FetchFailure
from capy.net.transport import SsrfBlockedError
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.fetch.limits import FetchLimits
    from capy.rules.views.security import BinaryContentTypes

# Text first: capy indexes text, and a server that can send either should pick the readable one.
ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5"
METADATA_RULE_PREFIX = "security.metadata-"


@dataclass(frozen=True)
class FetchedPage:
    url: str  # as requested
    final_url: str  # after redirects
    status: int
    content_type: str  # the Content-Type header as sent ("" when absent)
    body: bytes  # decoded from any Content-Encoding, at most the size limit

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()


def fetch_page(
    client: httpx.Client, url: str, *, limits: FetchLimits, binary: BinaryContentTypes
) -> FetchedPage:
    """GET `url`, or raise `FetchError` saying in one sentence why not."""
    deadline = time.monotonic() + limits.timeout
    try:
        with client.stream("GET", url, headers={"Accept": ACCEPT}) as response:
            _check_status(response)
            content_type = response.headers.get("content-type", "")
            _check_binary(content_type, binary)
            _check_declared_size(response, limits.max_response_bytes)
            body = _read_capped(response, limits, deadline)
            return FetchedPage(url, str(response.url), response.status_code, content_type, body)
    except SsrfBlockedError as exc:
        raise _blocked(exc) from None
    except httpx.TooManyRedirects:
        raise FetchError(
            FetchFailure.REDIRECTS,
            f"the URL redirected more than {limits.max_redirects} times "
            "(security pack ssrf.max_redirects); fetch the final address directly",
        ) from None
    except httpx.TimeoutException:
        raise _timed_out(limits) from None
    except httpx.InvalidURL as exc:
        raise FetchError(FetchFailure.INVALID_URL, f"the URL is not valid: {exc}") from None
    except httpx.HTTPError as exc:
        raise FetchError(
            FetchFailure.NETWORK, f"the connection failed ({_short(exc)}); check the address"
        ) from None


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    reason = f"HTTP {status} {response.reason_phrase}".strip()
    if status >= 500:
        advice = "the server failed; try again later"
    elif status in (401, 403):
        advice = "the page needs a login or refuses automated clients"
    elif status == 429:
        advice = "the server is rate limiting; try again later"
    else:
        advice = "check the URL"
    raise FetchError(FetchFailure.HTTP_STATUS, f"the server answered {reason}; {advice}")


def _check_binary(content_type: str, binary: BinaryContentTypes) -> None:
    rule = binary.refusing_rule(content_type) if content_type else None
    if rule is None:
        return
    media = content_type.split(";", 1)[0].strip().lower()
    raise FetchError(
        FetchFailure.BINARY,
        f"the response is {media}, a binary type capy does not index [{rule.id}]; fetch a text "
        "or HTML version of it",
    )


def _check_declared_size(response: httpx.Response, limit: int) -> None:
    # Content-Length counts encoded bytes; a gzip body can still grow past the limit, which the
    # streaming read catches. This only saves downloading what is already known to be too big.
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and "content-encoding" not in response.headers and int(declared) > limit:
        raise _too_large(f"is {human_bytes(int(declared))}", limit)


def _read_capped(response: httpx.Response, limits: FetchLimits, deadline: float) -> bytes:
    parts: list[bytes] = []
    size = 0
    for part in response.iter_bytes():
        size += len(part)
        if size > limits.max_response_bytes:
            raise _too_large("passed", limits.max_response_bytes)
        parts.append(part)
        if time.monotonic() > deadline:
            raise _timed_out(limits)
    return b"".join(parts)


def _too_large(how: str, limit: int) -> FetchError:
    return FetchError(
        FetchFailure.TOO_LARGE,
        f"the response {how} the {human_bytes(limit)} fetch limit (security pack "
        "fetch.max_response_bytes); fetch a smaller page, or raise the limit in a rules overlay",
    )


def _timed_out(limits: FetchLimits) -> FetchError:
    return FetchError(
        FetchFailure.TIMEOUT,
        f"the server did not answer within {limits.timeout:g} s (setting fetch.timeout); "
        "try again later or raise the timeout",
    )


def _blocked(exc: SsrfBlockedError) -> FetchError:
    reason = str(exc).removeprefix("blocked: ")
    if exc.rule_id is None and "did not resolve" in reason:
        return FetchError(FetchFailure.DNS, f"the host name {reason}")
    if exc.rule_id is None or exc.rule_id.startswith(METADATA_RULE_PREFIX):
        return FetchError(FetchFailure.BLOCKED, f"capy's SSRF guard refused it: {reason}")
    return FetchError(
        FetchFailure.BLOCKED,
        f"capy's SSRF guard refused it: {reason}; if the host is yours, add it to the "
        "fetch.allow_hosts setting in your user config (a project file may not widen it)",
    )


def _short(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."
