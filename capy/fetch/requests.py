"""What a fetch call asked for, as a plan per URL: the URL, how it is shown and stored (secrets
masked), and the label its source goes under."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.rules.views.secrets import SecretsPack


class RequestError(ValueError):
    """The call's URLs or labels cannot be used; the message says what to pass instead."""


@dataclass(frozen=True)
class FetchRequest:
    url: str
    source: str | None = None


@dataclass(frozen=True)
class PlannedFetch:
    url: str  # what is requested (fragment dropped: servers never see it)
    shown_url: str  # the URL with secrets masked: shown, stored and used as a label
    label: str
    label_is_url: bool


def plan_fetches(
    urls: str | FetchRequest | Mapping[str, Any] | Sequence[Any],
    *,
    source: str | None,
    secrets: SecretsPack,
) -> list[PlannedFetch]:
    """One plan per distinct label, in the order given.

    Labels: a request's own `source`; else the call's `source` (alone for one URL, followed by
    the URL when several share it, so `source="<label> *"` searches them all); else the URL.
    """
    from capy.store.content import redact_text

    requests = _requests(urls)
    if not requests:
        raise RequestError("give at least one URL to fetch")
    shared = _label_text(source, "source")
    plans: dict[str, PlannedFetch] = {}
    for request in requests:
        url = request.url.strip().split("#", 1)[0]
        shown, _ = redact_text(url, secrets)
        own = _label_text(request.source, "a request's source")
        if own is not None:
            label = own
        elif shared is not None:
            label = shared if len(requests) == 1 else f"{shared} {shown}"
        else:
            label = shown
        plans.setdefault(label, PlannedFetch(url, shown, label, label == shown))
    return list(plans.values())


def _requests(urls: Any) -> list[FetchRequest]:
    if isinstance(urls, str | FetchRequest | Mapping):
        urls = [urls]
    if not isinstance(urls, Sequence):
        raise RequestError("give the URLs as a list of strings or of {url, source} objects")
    return [_request(item) for item in urls]


def _request(item: Any) -> FetchRequest:
    if isinstance(item, FetchRequest):
        return item
    if isinstance(item, str):
        return FetchRequest(item)
    if isinstance(item, Mapping) and isinstance(item.get("url"), str):
        unknown = sorted(set(item) - {"url", "source"})
        if unknown:
            raise RequestError(
                f"a request holds only url and source, not {', '.join(map(repr, unknown))}"
            )
        return FetchRequest(item["url"], item.get("source"))
    raise RequestError("each request is a URL string or an object like {url, source}")


def _label_text(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RequestError(f"{what} must be a non-empty label, or left out")
    return value.strip()
