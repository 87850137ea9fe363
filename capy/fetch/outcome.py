"""What happened to each URL of a fetch call, as data the reply and `--json` are built from."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    INDEXED = "indexed"  # fetched, and stored new or changed content
    UNCHANGED = "unchanged"  # fetched again; the stored content was already the same
    CACHED = "cached"  # answered from the store, not fetched
    ROUTED = "routed"  # an issue or pull-request URL: answered with the CLI command to use
    FAILED = "failed"

    @property
    def succeeded(self) -> bool:
        return self is not Status.FAILED


@dataclass(frozen=True)
class UrlOutcome:
    url: str  # secrets masked
    status: Status
    label: str | None = None
    kind: str = ""
    content_type: str = ""
    converted_from_html: bool = False
    title: str = ""
    fetched_bytes: int = 0  # response body bytes read
    stored_bytes: int = 0  # size of the stored (redacted, capped) text
    chunk_count: int = 0
    preview: tuple[str, ...] = ()
    cache_age_seconds: int | None = None
    cache_ttl_seconds: int | None = None
    redirected_to: str | None = None
    redactions: int = 0
    capped_at: int | None = None  # the source cap, when the text was over it and cut
    message: str = ""  # the failure sentence, or the routing advice
    failure: str | None = None  # a FetchFailure value
    command: str | None = None  # the CLI command a routed URL should be read with

    @property
    def processed_bytes(self) -> int:
        """Raw data handled for the agent: the body read, or the cached text served."""
        return self.fetched_bytes or (self.stored_bytes if self.status is Status.CACHED else 0)
