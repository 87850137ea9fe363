"""Why a URL was not fetched: one category a program can branch on, one sentence a person reads."""

from __future__ import annotations

from enum import StrEnum


class FetchFailure(StrEnum):
    INVALID_URL = "invalid-url"
    BLOCKED = "blocked"
    DNS = "dns"
    TIMEOUT = "timeout"
    TOO_LARGE = "too-large"
    BINARY = "binary"
    HTTP_STATUS = "http-status"
    REDIRECTS = "too-many-redirects"
    NETWORK = "network"
    EMPTY = "empty"
    NOT_INDEXED = "not-indexed"  # the indexer refused the text (size cap policy, binary)
    PROCESSING = "processing"


class FetchError(Exception):
    """A URL capy did not fetch or could not index; `str()` is the sentence to show."""

    def __init__(self, failure: FetchFailure, message: str) -> None:
        super().__init__(message)
        self.failure = failure
        self.message = message
