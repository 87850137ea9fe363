"""The parts of secret redaction a hook process can afford: judging a detector's matches,
merging overlapping finds, splicing masks in, and a detector set read from plain data.

A hook is a fresh process on every tool call; the typed secrets view (pydantic) and the
many-detector scanner cost tens of milliseconds to import and build. These functions need only
`re` and `math`, and the view, the scanner and `capy.security.redaction` use the same ones, so a
hook redacts exactly as everything else does.
"""

from __future__ import annotations

from capy.packregex import pack_regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TypeVar

    Found = TypeVar("Found")

# The full rule id stays in the mask, so a reader knows what kind of secret was there and can
# find the rule (`capy rules show <id>`). "REDACTED" is on the pack's placeholder allowlist, so
# redacting already-redacted text changes nothing.
MASK = "[REDACTED:{rule_id}]"


# Between the head and the tail of text longer than its bound.
CUT = "\n[... {omitted:,} characters not kept ...]\n"


def bounded_redaction(text: str, limit: int, margin: int, redact: Callable[[str], str]) -> str:
    """`text` redacted and cut to `limit` characters (head and tail around a marker). The
    `margin` characters just past each cut are redacted with the kept part, so a secret across
    a cut is whole when the detectors judge it."""
    if len(text) <= limit:
        return redact(text)
    head_chars = limit // 2
    tail_chars = limit - head_chars
    head = redact(text[: head_chars + margin])[:head_chars]
    tail = redact(text[-(tail_chars + margin) :])[-tail_chars:]
    omitted = len(text) - head_chars - tail_chars
    return head + CUT.format(omitted=omitted) + tail


def mask_for(rule_id: str) -> str:
    return MASK.format(rule_id=rule_id)


def shannon_entropy(value: str) -> float:
    """Bits per character; random base64 scores near 6, English words near 3."""
    if not value:
        return 0.0
    # Imported here: `math` is a shared library to load, and a hook whose text holds no
    # candidate secret never scores one.
    from math import log2

    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    size = len(value)
    return -sum(count / size * log2(count / size) for count in counts.values())


def judged_spans(
    pattern: re.Pattern[str],
    text: str,
    matches: Iterable[re.Match[str]],
    min_entropy: float | None,
    allowlist: Sequence[re.Pattern[str]],
) -> list[tuple[int, int]]:
    """The secret spans among a detector's regex matches: the `secret` group (or the whole
    match), over the entropy floor, not allowlisted."""
    spans = []
    has_group = "secret" in pattern.groupindex
    for match in matches:
        start, end = match.span("secret") if has_group else (-1, -1)
        if start < 0:
            # A pattern may offer a self-delimiting token in one branch (no group) and a
            # `name = (?P<secret>value)` branch in another: the branch without it is whole.
            start, end = match.span()
        if start == end:
            continue
        secret = text[start:end]
        if min_entropy is not None and shannon_entropy(secret) < min_entropy:
            continue
        if any(allowed.search(secret) for allowed in allowlist):
            continue
        spans.append((start, end))
    return spans


def merge_overlaps(found: Iterable[Found], make: Callable[[str, int, int], Found]) -> list[Found]:
    """Finds sorted by position with overlaps merged: the union is kept and credited to the
    find that starts first, longest first on a tie. `make(rule_id, start, end)` builds one."""
    ordered = sorted(found, key=lambda f: (f.start, -f.end))  # type: ignore[attr-defined]
    merged: list[Any] = []
    for finding in ordered:
        if merged and finding.start < merged[-1].end:  # type: ignore[attr-defined]
            last = merged[-1]
            if finding.end > last.end:  # type: ignore[attr-defined]
                merged[-1] = make(last.rule_id, last.start, finding.end)  # type: ignore[attr-defined]
            continue
        merged.append(finding)
    return merged


def splice_masks(text: str, findings: Iterable[Any]) -> str:
    """`text` with each (merged, ordered) find replaced by its mask."""
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(mask_for(finding.rule_id))
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


class Finding:
    __slots__ = ("end", "rule_id", "start")

    def __init__(self, rule_id: str, start: int, end: int):
        self.rule_id, self.start, self.end = rule_id, start, end


def plain_detectors(secrets: Any) -> dict[str, Any]:
    """The active detectors of a secrets view as plain JSON data for `PlainSecrets`: the global
    allowlist once, and each detector with its own allowlist and its keywords lowered."""
    return {
        "global_allowlist": [rule.pattern for rule in secrets.active_allowlist],
        "detectors": [
            {
                "id": detector.id,
                "pattern": detector.pattern,
                "keywords": list(detector.lowered_keywords),
                "entropy": detector.entropy,
                "allowlist": list(detector.allowlist),
                "use_global_allowlist": detector.use_global_allowlist,
            }
            for detector in secrets.active_detectors
        ],
    }


class PlainSecrets:
    """The secrets pack's detectors from `plain_detectors` data: the same finds as the view's
    `find_secrets`, with a regex compiled only once its keywords occur in a text."""

    def __init__(self, data: dict[str, Any]):
        self._detectors: Sequence[dict[str, Any]] = data["detectors"]
        self._global_allowlist: list[str] = data["global_allowlist"]
        self._compiled: dict[str, tuple[re.Pattern[str], list[re.Pattern[str]]]] = {}
        # Which detectors each keyword wakes, and those without keywords, which always run: a
        # text is tested once per distinct keyword (in C), not once per detector's keyword.
        self._always: list[int] = []
        self._by_keyword: dict[str, list[int]] = {}
        for number, detector in enumerate(self._detectors):
            for keyword in detector["keywords"]:
                self._by_keyword.setdefault(keyword, []).append(number)
            if not detector["keywords"]:
                self._always.append(number)
        self._keywords = tuple(self._by_keyword)

    def find_secrets(self, text: str) -> list[Finding]:
        chosen = set(self._always)
        for keyword in filter(text.lower().__contains__, self._keywords):
            chosen.update(self._by_keyword[keyword])
        found: list[Finding] = []
        for number in sorted(chosen):  # the detectors' own order, as the view runs them
            detector = self._detectors[number]
            pattern, allowlist = self._compiled_one(detector)
            spans = judged_spans(
                pattern, text, pattern.finditer(text), detector["entropy"], allowlist
            )
            found.extend(Finding(detector["id"], start, end) for start, end in spans)
        return merge_overlaps(found, Finding)

    def redact(self, text: str) -> str:
        findings = self.find_secrets(text)
        return splice_masks(text, findings) if findings else text

    def _compiled_one(self, detector: dict[str, Any]) -> tuple[re.Pattern[str], list[Any]]:
        rule_id = detector["id"]
        if rule_id not in self._compiled:
            shared = self._global_allowlist if detector["use_global_allowlist"] else []
            allow = [pack_regex(item) for item in (*detector["allowlist"], *shared)]
            self._compiled[rule_id] = (pack_regex(detector["pattern"]), allow)
        return self._compiled[rule_id]
