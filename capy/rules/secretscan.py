"""Secret detectors compiled from the secrets pack: keyword prefilter, regex, entropy, allowlists.

A detector's regex may name a group `secret`; that span is what gets judged and redacted. Without
it, or in a match where the group took no part (an alternation branch that has no group), the whole
match is the secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from capy.codecache import compile_trusted
from capy.masking import judged_spans
from capy.rules.secretplan import MAX_WINDOW, Factor, ScanPlan, plan_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class SecretFinding:
    """Where one rule found a secret."""

    rule_id: str
    start: int
    end: int


@dataclass(frozen=True)
class SecretDetector:
    """One secret rule, compiled: its regex, keywords, entropy floor and allowlist."""

    rule_id: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    min_entropy: float | None
    allowlist: Sequence[re.Pattern[str]]

    def find(self, text: str, lowered: str | None = None) -> list[SecretFinding]:
        if self.keywords:
            haystack = lowered if lowered is not None else text.lower()
            if not any(keyword in haystack for keyword in self.keywords):
                return []
        return self.judge(text, self.pattern.finditer(text))

    def judge(self, text: str, matches: Iterable[re.Match[str]]) -> list[SecretFinding]:
        """The findings among regex matches: secret span, entropy floor, allowlists."""
        spans = judged_spans(self.pattern, text, matches, self.min_entropy, self.allowlist)
        return [SecretFinding(self.rule_id, start, end) for start, end in spans]


def compile_detector(
    rule: Mapping[str, Any], global_allowlist: Iterable[Any] = ()
) -> SecretDetector:
    if not rule.get("use_global_allowlist", True):
        global_allowlist = ()
    allow = [*rule.get("allowlist", ()), *(_allow_pattern(item) for item in global_allowlist)]
    return SecretDetector(
        rule_id=rule["id"],
        pattern=compile_trusted(rule["pattern"]),
        keywords=tuple(keyword.lower() for keyword in rule.get("keywords", ())),
        min_entropy=rule.get("entropy"),
        allowlist=AllowPatterns(allow),
    )


class AllowPatterns(Sequence[re.Pattern[str]]):
    """A detector's allowlist, compiled when a match is first judged: most texts have none,
    and a detector without keywords runs on every text, so a short-lived process (a hook, a
    CLI command) would otherwise compile the whole global allowlist to redact a few lines."""

    __slots__ = ("_compiled", "sources")

    def __init__(self, sources: Iterable[str]) -> None:
        self.sources = tuple(sources)
        self._compiled: tuple[re.Pattern[str], ...] | None = None

    def _patterns(self) -> tuple[re.Pattern[str], ...]:
        if self._compiled is None:
            self._compiled = tuple(re.compile(source) for source in self.sources)
        return self._compiled

    def __getitem__(self, index: Any) -> Any:
        return self._patterns()[index]

    def __len__(self) -> int:
        return len(self.sources)

    def __iter__(self) -> Iterator[re.Pattern[str]]:
        return iter(self._patterns())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AllowPatterns) and other.sources == self.sources

    def __hash__(self) -> int:
        return hash(self.sources)

    def __repr__(self) -> str:
        return f"AllowPatterns({self.sources!r})"


def _allow_pattern(item: Any) -> str:
    return item["pattern"] if isinstance(item, Mapping) else item


# ---- Scanning many detectors at once ---------------------------------------------------------
# Run one by one, each detector costs a pass over the whole text per keyword and a regex pass
# that, for patterns not starting with a literal, tries every position. `SecretScanner` gives
# the very same findings with less work:
#   1. An Aho-Corasick automaton of every keyword and every factor literal
#      (`_needle_automaton`) finds where each of them starts, in one pass. It tells which
#      keywords occur and how often each factor does.
#   2. A "factor" is a literal a match of a detector's regex consumes, read from the regex's
#      parse tree (capy/rules/secretplan.py), which often offers several choices; the scanner
#      takes the choice with the fewest hits in the text at hand. A match can only start a bounded
#      distance before a factor occurrence, and for a regex that can never match a newline, on
#      its line. So the regex runs on those windows only, through `pos`/`endpos`: look-behinds,
#      `^` and `\b` still see the real text before a window, and each window ends far enough out
#      that every attempt reads what it would read in the whole text. A regex with neither bound
#      scans everything.
# Factors are looked up in a case-folded copy of the text, so their hits are a superset of where
# the regex can match, whatever its flags: a window too many costs time, never a finding.

# Windows closer than this merge: searching a short gap costs less than starting a new search
# (kept short: for the costliest regexes, a line of gap costs more than a new search).
_MERGE_GAP = 32
# Above this many factor hits per character, windows would cover most of the text anyway; for
# a regex that `re` can skip along by its leading literal, a window per hit costs more sooner.
_DENSE_HITS = 1 / 128
_DENSE_LITERAL_LED_HITS = 1 / 4096
# Factor literals at least this long join the keyword trie, which then locates them for free.
_MIN_NEEDLE = 3
# Characters `re` matches case-insensitively with an ASCII letter although `str.lower` does not
# turn them into it; İ also lowers to two characters, which would shift every later position.
_FOLD_EXTRA = str.maketrans({"ı": "i", "ſ": "s", "İ": "i"})


class SecretScanner:
    """Every detector of a pack at once; `find` returns exactly what each detector's `find`
    returns, in detector order."""

    def __init__(self, detectors: Iterable[SecretDetector]) -> None:
        self.detectors = tuple(detectors)
        self.plans = tuple(plan_for(detector.pattern) for detector in self.detectors)
        needles = {keyword for detector in self.detectors for keyword in detector.keywords}
        # Short literals occur at too many positions: the trie would slow down to list them all.
        # They are counted and located directly, and only when a detector's cover asks.
        needles.update(
            literal
            for plan in self.plans
            if plan
            for literal in plan.literals
            if len(literal) >= _MIN_NEEDLE
        )
        needles.discard("")  # an empty keyword is in every text: checked directly
        self._needles = tuple(sorted(needles))
        self._automaton = _needle_automaton(self._needles)

    def find(self, text: str) -> list[SecretFinding]:
        lowered = text.lower()
        starts = self._needle_starts(lowered)
        folded = _fold(text, lowered)
        hits = _FactorHits(text, folded, starts if folded is lowered else None)
        findings: list[SecretFinding] = []
        for detector, plan in zip(self.detectors, self.plans, strict=True):
            keywords = detector.keywords
            if keywords and not any(k in starts or k == "" for k in keywords):
                continue
            matches = None
            if plan is not None and hits.folded is not None:
                total, factors = plan.choose(hits.count, hits.free)
                dense = _DENSE_LITERAL_LED_HITS if plan.literal_led else _DENSE_HITS
                if total <= len(text) * dense:
                    spans = hits.spans(factors, by_line=plan.width is None)
                    matches = _windowed(detector.pattern, text, spans, plan)
            if matches is None:
                matches = detector.pattern.finditer(text)
            findings.extend(detector.judge(text, matches))
        return findings

    def _needle_starts(self, lowered: str) -> dict[str, list[int]]:
        """Where each needle starts in `lowered`, in order, overlaps included; absent needles
        are not in."""
        if self._automaton is None:
            return {}
        # One Aho-Corasick pass reports every needle ending at every position, prefixes and
        # overlaps included; ends ascend, so each needle's starts come out sorted. A typical
        # megabyte has tens of thousands of hits, so the loop body is one bound append.
        ends: list[list[int]] = [[] for _ in self._needles]
        add = [positions.append for positions in ends]
        for end, index in self._automaton.iter(lowered):
            add[index](end)
        starts: dict[str, list[int]] = {}
        for needle, positions in zip(self._needles, ends, strict=True):
            if positions:
                shift = len(needle) - 1
                starts[needle] = [end - shift for end in positions]
        return starts


def _fold(text: str, lowered: str) -> str | None:
    """`lowered` with `re`'s extra case folds, position for position; None if that fails."""
    if lowered.isascii():
        return lowered
    if len(lowered) == len(text) and "ı" not in text and "ſ" not in text:
        return lowered  # the same string: with İ in the text, lowered would be longer
    folded = text.translate(_FOLD_EXTRA).lower()
    return folded if len(folded) == len(text) else None


class _FactorHits:
    """Factor occurrences in the folded text, each literal counted and located at most once."""

    def __init__(
        self, text: str, folded: str | None, needle_starts: dict[str, list[int]] | None
    ) -> None:
        self.text = text
        self.folded = folded
        # Starts from the needle trie, when it ran on `folded` itself (the lowered text).
        self._positions: dict[str, list[int]] = dict(needle_starts or {})
        self._counts = {literal: len(found) for literal, found in self._positions.items()}
        self._complete = needle_starts is not None

    def free(self, literal: str) -> bool:
        """Whether counting `literal` costs nothing more (the trie counted it, or it was asked)."""
        return literal in self._counts or (self._complete and len(literal) >= _MIN_NEEDLE)

    def count(self, literal: str) -> int:
        if literal not in self._counts:
            self._counts[literal] = 0 if self.free(literal) else self.folded.count(literal)
        return self._counts[literal]

    def positions(self, literal: str) -> list[int]:
        if literal not in self._positions:
            found = [] if self.count(literal) == 0 else _occurrences(literal, self.folded)
            self._positions[literal] = found
        return self._positions[literal]

    def spans(self, factors: tuple[Factor, ...], *, by_line: bool) -> list[tuple[int, int]]:
        """(first possible start, factor position) of every hit, by first possible start.

        A hit at p allows starts in [p - before, p], and for a line-bound regex not before the
        line's start, nor before the run of characters ending at p that the regex can consume
        ahead of the factor (the name in `name = value`).
        """
        text = self.text
        spans = []
        for factor in factors:
            lead = _lead_run(factor.lead)
            for position in self.positions(factor.literal):
                begin = max(0, position - factor.before)
                if by_line:
                    begin = max(begin, text.rfind("\n", begin, position) + 1)
                if lead is not None and begin < position:
                    begin = _run_start(text, begin, position, lead)
                spans.append((begin, position))
        if len(factors) > 1:
            spans.sort()
        return spans


def _run_start(text: str, begin: int, position: int, lead: re.Pattern[str]) -> int:
    """Where the run of `lead` characters that ends at `position` starts, not before `begin`.

    Reads backwards from the factor, and at most `MAX_WINDOW` characters: a longer run leaves
    `begin` as it is, so a long line costs no more than a short one.
    """
    low = max(begin, position - MAX_WINDOW)
    run = lead.match(text[low:position][::-1]).end()
    return begin if low > begin and run == position - low else position - run


@lru_cache(maxsize=256)
def _lead_run(lead: frozenset[str] | None) -> re.Pattern[str] | None:
    """A regex matching a run of `lead` characters (in reverse text, from the factor back); read
    case-insensitively, so the run is never too short."""
    if lead is None:
        return None
    return re.compile(f"[{''.join(sorted(lead))}]*" if lead else "", re.IGNORECASE)


def _occurrences(factor: str, folded: str) -> list[int]:
    """Every position where `factor` starts, overlapping ones included (`aa` twice in `aaa`)."""
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
    pattern: re.Pattern[str], text: str, spans: list[tuple[int, int]], plan: ScanPlan
) -> Iterator[re.Match[str]]:
    """The matches a whole-text `finditer` gives, searching only where a match can start.

    `floor` carries the end of the last match into the next window, as `finditer` would, so a
    window never yields a match overlapping one already given.
    """
    floor = 0
    for low, last, end in _windows(text, spans, plan):
        start = max(low, floor)
        if start > last:
            continue
        if (last - start + 1) * _POSITION_COST < end - start:
            found = _matches_starting_by(pattern, text, start, last, end)
        else:
            found = pattern.finditer(text, start, end)
        for match in found:
            if match.start() > last:
                break  # past the last possible start: the whole-text scan finds none here
            floor = match.end()
            yield match


# A search that finds nothing reads on to the window's end; in a line-bound window that is the
# end of the line, which in minified JSON or a one-line log is the end of a megabyte, once per
# window (41 s on one 1 MB JSON file). Trying each possible start with `match` costs about as
# much as searching this many characters, so it wins when the window is that much longer than
# its starts.
_POSITION_COST = 16


def _matches_starting_by(
    pattern: re.Pattern[str], text: str, start: int, last: int, end: int
) -> Iterator[re.Match[str]]:
    """What `pattern.finditer(text, start, end)` yields up to its first match starting after
    `last`, trying only the starts up to `last` (the same leftmost-first order)."""
    position = start
    while position <= last:
        match = pattern.match(text, position, end)
        if match is None:
            position += 1
            continue
        yield match
        position = match.end() if match.end() > position else position + 1


def _windows(
    text: str, spans: list[tuple[int, int]], plan: ScanPlan
) -> Iterator[tuple[int, int, int]]:
    """(first start, last start, end) of each window around the sorted factor hits.

    The end leaves room for everything an attempt reads: `reach` past the last start, or,
    line-bound, the newline, the character after it (`$` looks there) and `reach` more for
    look-arounds that can match a newline. Windows closer than `_MERGE_GAP` merge: the
    positions between them cannot start a match, so searching them changes nothing.
    """
    size = len(text)
    low = last = -1
    for begin, position in spans:
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


def _needle_automaton(needles: tuple[str, ...]):
    """An Aho-Corasick automaton over the needles (None when there are none).

    `re` has no multi-string search: its best form here (a trie as a regex) still looked at
    every letter of the text, about three times slower than one automaton pass on typical logs.
    """
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for index, needle in enumerate(needles):
        automaton.add_word(needle, index)  # the value is the needle's index in `needles`
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton
