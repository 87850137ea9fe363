"""Secret detectors compiled from the secrets pack: keyword prefilter, regex, entropy, allowlists.

A detector's regex may name a group `secret`; that span is what gets judged and redacted. Without
it, or in a match where the group took no part (an alternation branch that has no group), the whole
match is the secret.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SecretFinding:
    rule_id: str
    start: int
    end: int


@dataclass(frozen=True)
class SecretDetector:
    rule_id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    min_entropy: float | None
    allowlist: tuple[re.Pattern[str], ...]

    def find(self, text: str, lowered: str | None = None) -> list[SecretFinding]:
        if self.keywords:
            haystack = lowered if lowered is not None else text.lower()
            if not any(keyword in haystack for keyword in self.keywords):
                return []
        findings = []
        has_group = "secret" in self.pattern.groupindex
        for match in self.pattern.finditer(text):
            start, end = match.span("secret") if has_group else (-1, -1)
            if start < 0:
                # A pattern may offer a self-delimiting token in one branch (no group) and a
                # `name = (?P<secret>value)` branch in another: the branch without it is whole.
                start, end = match.span()
            if start == end:
                continue
            secret = text[start:end]
            if self.min_entropy is not None and shannon_entropy(secret) < self.min_entropy:
                continue
            if any(allowed.search(secret) for allowed in self.allowlist):
                continue
            findings.append(SecretFinding(self.rule_id, start, end))
        return findings


def shannon_entropy(value: str) -> float:
    """Bits per character; random base64 scores near 6, English words near 3."""
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


def compile_detector(
    rule: Mapping[str, Any], global_allowlist: Iterable[Any] = ()
) -> SecretDetector:
    if not rule.get("use_global_allowlist", True):
        global_allowlist = ()
    allow = [*rule.get("allowlist", ()), *(_allow_pattern(item) for item in global_allowlist)]
    return SecretDetector(
        rule_id=rule["id"],
        pattern=re.compile(rule["pattern"]),
        keywords=tuple(keyword.lower() for keyword in rule.get("keywords", ())),
        min_entropy=rule.get("entropy"),
        allowlist=tuple(re.compile(item) for item in allow),
    )


def _allow_pattern(item: Any) -> str:
    return item["pattern"] if isinstance(item, Mapping) else item
