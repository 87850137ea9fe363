"""The limits one fetch call runs under: the security pack's fetch part plus the user's settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.config.settings import FetchSettings
    from capy.rules import RuleSet
    from capy.rules.views.security import SecurityPack


@dataclass(frozen=True)
class FetchLimits:
    max_response_bytes: int
    timeout: float  # seconds for the whole fetch, redirects included
    max_redirects: int
    default_concurrency: int
    max_concurrency: int
    allow_hosts: tuple[str, ...] = ()  # fetch.allow_hosts: hosts the SSRF guard lets through

    @classmethod
    def from_rules(cls, rules: RuleSet, settings: FetchSettings) -> FetchLimits:
        security: SecurityPack = rules.view("security")
        return cls(
            max_response_bytes=security.fetch.max_response_bytes,
            timeout=settings.timeout,
            max_redirects=security.ssrf.max_redirects,
            default_concurrency=security.fetch.concurrency.default,
            max_concurrency=security.fetch.concurrency.max,
            allow_hosts=settings.allow_hosts,
        )
