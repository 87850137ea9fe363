"""Typed view of the secrets pack: detectors compiled once, findings merged, text redacted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from capy.masking import merge_overlaps
from capy.rules.secretscan import SecretDetector, SecretFinding, SecretScanner, compile_detector
from capy.rules.views.base import BaseModel, ConfigDict, Field, PackView, RuleView, active

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Examples(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    match: tuple[str, ...]
    no_match: tuple[str, ...]


class AllowRule(RuleView):
    """A global allowlist entry: a hit of `pattern` in a secret span drops the finding."""

    pattern: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    def allows(self, secret: str) -> bool:
        return self.regex.search(secret) is not None


class Detector(RuleView):
    kind: str = "secret"  # the schema holds it to "secret"; typing's Literal costs a warm search
    keywords: tuple[str, ...]
    pattern: str
    entropy: float | None = Field(default=None, ge=0, le=8)
    allowlist: tuple[str, ...] = ()
    use_global_allowlist: bool = True
    examples: Examples | None = None

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    @cached_property
    def lowered_keywords(self) -> tuple[str, ...]:
        """As the compiled detector checks them (compile_detector lowers them too)."""
        return tuple(keyword.lower() for keyword in self.keywords)

    @property
    def redacts_group(self) -> bool:
        """True when only the `secret` group is redacted (a password inside a URL, say)."""
        return "secret" in self.regex.groupindex

    def compile(self, global_allowlist: tuple[AllowRule, ...] = ()) -> SecretDetector:
        rule = {
            "id": self.id,
            "pattern": self.pattern,
            "keywords": self.keywords,
            "entropy": self.entropy,
            "allowlist": self.allowlist,
            "use_global_allowlist": self.use_global_allowlist,
        }
        return compile_detector(rule, (allow.pattern for allow in global_allowlist))


class SecretsPack(PackView):
    shapes_index: bool = True
    global_allowlist: tuple[AllowRule, ...] = ()
    detectors: tuple[Detector, ...]

    @cached_property
    def active_detectors(self) -> tuple[Detector, ...]:
        # Cached: a short text's scan walks this once per text, and a structured reply holds
        # dozens of short texts (the view is immutable, so the answer never changes).
        return active(self.detectors)

    @property
    def active_allowlist(self) -> tuple[AllowRule, ...]:
        return active(self.global_allowlist)

    def detector(self, rule_id: str) -> Detector:
        for detector in self.detectors:
            if detector.id == rule_id:
                return detector
        raise KeyError(rule_id)

    @cached_property
    def compiled(self) -> tuple[SecretDetector, ...]:
        allow = self.active_allowlist
        return tuple(detector.compile(allow) for detector in self.active_detectors)

    @cached_property
    def scanner(self) -> SecretScanner:
        """All compiled detectors run together: the same findings as one by one, faster."""
        return SecretScanner(self.compiled)

    def find_secrets(self, text: str) -> list[SecretFinding]:
        """Every finding of every active detector, sorted by position, overlaps merged.

        Where spans overlap (a JWT inside an Authorization header, say) the union is kept and
        credited to the detector whose span starts first, longest first on a tie.
        """
        if len(text) <= CLEAN_MEMO_CHARS:
            return self._find_in_short(text)
        if len(text) < DIRECT_SCAN_CHARS:
            found = self._find_directly(text)
        else:
            found = self.scanner.find(text)
        return merge_overlaps(found, SecretFinding)

    def _find_in_short(self, text: str) -> list[SecretFinding]:
        """A short text's findings; one found clean before is not scanned again. A structured
        reply repeats its keys, kinds, labels and titles in every item and every call (about
        half the reply's redaction in a server's search); the view is immutable, so a text
        clean once stays clean. Only clean texts are kept: a secret is never held here."""
        clean = self._clean_short_texts
        if text in clean:
            return []
        found = merge_overlaps(self._find_directly(text), SecretFinding)
        if not found:
            if len(clean) >= CLEAN_MEMO_ENTRIES:
                clean.clear()  # a bound on memory; the texts that repeat come back at once
            clean.add(text)
        return found

    @cached_property
    def _clean_short_texts(self) -> set[str]:
        return set()

    def _find_directly(self, text: str) -> list[SecretFinding]:
        """Detector by detector; a regex is compiled only once its keywords occur in a text
        (compiling all of them costs more than a short text's whole scan)."""
        lowered = text.lower()
        found: list[SecretFinding] = []
        detectors = self.active_detectors
        for index in self._keyed_detectors(lowered):
            found.extend(self._compiled_one(detectors[index]).find(text, lowered))
        return found

    def _keyed_detectors(self, lowered: str) -> list[int]:
        """The indexes, in order, of the detectors whose keywords occur in `lowered` (and of
        those without keywords): one automaton pass instead of each keyword searched alone,
        which was most of a short text's scan (a bulk capsule import scans thousands)."""
        gate = self._keyword_gate
        if gate.automaton is None:
            return list(gate.always)
        wanted = set(gate.always)
        for _, keyword in gate.automaton.iter(lowered):
            wanted.update(gate.by_keyword[keyword])
        return sorted(wanted)

    @cached_property
    def _keyword_gate(self) -> _KeywordGate:
        from capy.rules.secretscan import _needle_automaton

        always: list[int] = []
        by_keyword: dict[str, list[int]] = {}
        for index, detector in enumerate(self.active_detectors):
            keywords = detector.lowered_keywords
            if not keywords or "" in keywords:  # an empty keyword is in every text
                always.append(index)
            for keyword in keywords:
                by_keyword.setdefault(keyword, []).append(index)
        needles = tuple(sorted(keyword for keyword in by_keyword if keyword))
        return _KeywordGate(
            _needle_automaton(needles), tuple(always), [by_keyword[n] for n in needles]
        )

    def _compiled_one(self, detector: Detector) -> SecretDetector:
        cache = self._compiled_alone
        if detector.id not in cache:
            cache[detector.id] = detector.compile(self.active_allowlist)
        return cache[detector.id]

    @cached_property
    def _compiled_alone(self) -> dict[str, SecretDetector]:
        return {}


@dataclass(frozen=True)
class _KeywordGate:
    """An Aho-Corasick automaton over every detector keyword; a hit's value indexes
    `by_keyword`, the detectors that keyword admits."""

    automaton: Any
    always: tuple[int, ...]
    by_keyword: list[list[int]]


# Below this many characters each detector runs on its own: the same findings as the scanner,
# and no slower for such a text (about 1 ms for 2 KB, against 3 ms), while building the
# scanner's plans and needle automaton costs a quarter of a second, which a CLI command or a
# short reply would pay for a few lines. Measured by `capy bench redaction` and by hand.
DIRECT_SCAN_CHARS = 8192
# Texts up to this long found clean are remembered, at most CLEAN_MEMO_ENTRIES of them (under
# 1 MB): a reply's keys, kinds, labels and titles, not its snippets.
CLEAN_MEMO_CHARS = 200
CLEAN_MEMO_ENTRIES = 4096

VIEW = SecretsPack
