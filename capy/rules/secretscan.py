"""Secret detectors compiled from the secrets pack: keyword prefilter, regex, entropy, allowlists.

A detector's regex may name a group `secret`; that span is what gets judged and redacted. Without
it, or in a match where the group took no part (an alternation branch that has no group), the whole
match is the secret.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from capy.rules.secretplan import ScanPlan, plan_for


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
        return self.judge(text, self.pattern.finditer(text))

    def judge(self, text: str, matches: Iterable[re.Match[str]]) -> list[SecretFinding]:
        """The findings among regex matches: secret span, entropy floor, allowlists."""
        findings = []
        has_group = "secret" in self.pattern.groupindex
        for match in matches:
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


# ---- Scanning many detectors at once ---------------------------------------------------------
# Run one by one, each detector costs a pass over the whole text per keyword and a regex pass
# that, for patterns not starting with a literal, tries every position. `SecretScanner` gives
# the very same findings with less work:
#   1. One regex, a trie of every keyword, finds the longest keyword starting at each position;
#      the keywords that are prefixes of it start there too. One pass tells which keywords occur.
#   2. A "factor" is a literal every match of a detector's regex consumes, read from the regex's
#      parse tree (capy/rules/secretplan.py). A match can only start a bounded distance before a
#      factor occurrence, and for a regex that can never match a newline, on its line. So the
#      regex runs on those windows only, through `pos`/`endpos`: look-behinds, `^` and `\b` still
#      see the real text before a window, and each window ends far enough out that every attempt
#      reads what it would read in the whole text. A regex with neither bound scans everything.
# Factors are looked up in a case-folded copy of the text, so their hits are a superset of where
# the regex can match, whatever its flags: a window too many costs time, never a finding.

# Windows closer than this merge: searching a short gap costs less than starting a new search.
_MERGE_GAP = 256
# Above this many factor hits per character, windows would cover most of the text anyway.
_DENSE_HITS = 1 / 128
# Characters `re` matches case-insensitively with an ASCII letter although `str.lower` does not
# turn them into it; İ also lowers to two characters, which would shift every later position.
_FOLD_EXTRA = str.maketrans({"ı": "i", "ſ": "s", "İ": "i"})


class SecretScanner:
    """Every detector of a pack at once; `find` returns exactly what each detector's `find`
    returns, in detector order."""

    def __init__(self, detectors: Iterable[SecretDetector]) -> None:
        self.detectors = tuple(detectors)
        self.plans = tuple(plan_for(detector.pattern) for detector in self.detectors)
        keywords = {keyword for detector in self.detectors for keyword in detector.keywords}
        keywords.discard("")  # an empty keyword is in every text: checked directly
        self._trie = re.compile(f"(?=({_trie_pattern(keywords)}))") if keywords else None
        self._prefixes = {k: [p for p in keywords if k.startswith(p)] for k in keywords}

    def find(self, text: str) -> list[SecretFinding]:
        lowered = text.lower()
        present = self._keywords_in(lowered)
        folded = _fold(text, lowered)
        factor_hits: dict[str, list[int]] = {}
        factor_counts: dict[str, int] = {}
        findings: list[SecretFinding] = []
        for detector, plan in zip(self.detectors, self.plans, strict=True):
            keywords = detector.keywords
            if keywords and not any(k in present or k == "" for k in keywords):
                continue
            if plan is None or folded is None or _dense(plan, folded, factor_counts):
                matches = detector.pattern.finditer(text)
            else:
                starts = _factor_starts(plan.factors, folded, factor_hits)
                matches = _windowed(detector.pattern, text, starts, plan)
            findings.extend(detector.judge(text, matches))
        return findings

    def _keywords_in(self, lowered: str) -> set[str]:
        if self._trie is None:
            return set()
        longest = set(self._trie.findall(lowered))
        return {prefix for keyword in longest for prefix in self._prefixes[keyword]}


def _fold(text: str, lowered: str) -> str | None:
    """`lowered` with `re`'s extra case folds, position for position; None if that fails."""
    if lowered.isascii():
        return lowered
    folded = text.translate(_FOLD_EXTRA).lower()
    return folded if len(folded) == len(text) else None


def _dense(plan: ScanPlan, folded: str, counts: dict[str, int]) -> bool:
    """Whether factor hits are so many that windows would cover most of the text anyway."""
    total = 0
    for factor in plan.factors:
        if factor not in counts:
            counts[factor] = folded.count(factor)
        total += counts[factor]
    return total > len(folded) * _DENSE_HITS


def _factor_starts(factors: tuple[str, ...], folded: str, cache: dict[str, list[int]]) -> list[int]:
    """Every position where a factor starts, overlapping ones included (`aa` twice in `aaa`)."""
    for factor in factors:
        if factor not in cache:
            cache[factor] = _occurrences(factor, folded)
    if len(factors) == 1:
        return cache[factors[0]]
    return sorted(p for factor in factors for p in cache[factor])


def _occurrences(factor: str, folded: str) -> list[int]:
    # Only a factor whose start equals its end ("aa", "abab") can overlap itself; the others
    # take `re`'s fast literal search, which skips overlaps but here has none to skip.
    if any(factor[:size] == factor[-size:] for size in range(1, len(factor))):
        found, index = [], folded.find(factor)
        while index >= 0:
            found.append(index)
            index = folded.find(factor, index + 1)
        return found
    return [match.start() for match in re.finditer(re.escape(factor), folded)]


def _windowed(
    pattern: re.Pattern[str], text: str, starts: list[int], plan: ScanPlan
) -> Iterator[re.Match[str]]:
    """The matches a whole-text `finditer` gives, searching only where a match can start.

    `floor` carries the end of the last match into the next window, as `finditer` would, so a
    window never yields a match overlapping one already given.
    """
    floor = 0
    for low, last, end in _windows(text, starts, plan):
        start = max(low, floor)
        if start > last:
            continue
        for match in pattern.finditer(text, start, end):
            if match.start() > last:
                break  # past the last possible start: the whole-text scan finds none here
            floor = match.end()
            yield match


def _windows(text: str, starts: list[int], plan: ScanPlan) -> Iterator[tuple[int, int, int]]:
    """(first start, last start, end) of each window around the sorted factor hits.

    A hit at p allows starts in [p - before, p], and for a line-bound regex not before the
    line's start. The end leaves room for everything an attempt reads: `reach` past the last
    start, or, line-bound, the newline, the character after it (`$` looks there) and `reach`
    more for look-arounds that can match a newline. Windows closer than `_MERGE_GAP` merge:
    the positions between them cannot start a match, so searching them changes nothing.
    """
    size = len(text)
    by_line = plan.width is None
    low = last = -1
    for position in starts:
        begin = max(0, position - plan.before)
        if by_line:
            begin = max(begin, text.rfind("\n", 0, position) + 1)
        if last >= 0 and begin > last + _MERGE_GAP:
            yield low, last, _window_end(text, last, plan, size)
            last = -1
        if last < 0:
            low = begin
        last = max(last, position)
    if last >= 0:
        yield low, last, _window_end(text, last, plan, size)


def _window_end(text: str, last: int, plan: ScanPlan, size: int) -> int:
    if plan.width is not None:
        return min(size, last + plan.reach)
    newline = text.find("\n", last)
    return size if newline < 0 else min(size, newline + 2 + plan.reach)


def _trie_pattern(strings: Iterable[str]) -> str:
    """An alternation that matches the longest of `strings` at a position (greedy, nested)."""
    root: dict[str, dict] = {}
    for string in strings:
        node = root
        for char in string:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_node(root)


def _trie_node(node: dict[str, dict]) -> str:
    branches = [re.escape(char) + _trie_node(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if "" in node else body
