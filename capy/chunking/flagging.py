"""Which lines of a text the chunking pack's error rules flag, and how badly.

One scan serves the log chunker (a chunk per flagged line) and the intent reply (its errors and
failures list), so both see the same lines. The rules run together through the secret scanner's
windowed engine, never once per line, so the cost stays linear however long the log is.

A CI runner or `docker build` writes something in front of every line (`2022-07-26T16:33:03.56Z `,
`#14 2.104 `); the pack's `log.line_prefix` is removed from each line first, so a rule anchored at
the start of a line (`^--- FAIL:`, `^  1) `) still finds the runner's own text. Removing it keeps
the line count, so line numbers stay those of the original text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import TYPE_CHECKING

from capy.chunking.pieces import text_line_starts
from capy.rules.secretscan import SecretDetector, SecretScanner
from capy.rules.views.chunking import Severity

if TYPE_CHECKING:
    from capy.rules.views.chunking import Log

SEVERITY_RANK = {severity: rank for rank, severity in enumerate(Severity)}


def flagged_lines(text: str, log: Log) -> dict[int, int]:
    """Line index -> the worst severity rank (0 error, 1 failure, 2 warning) any active error
    rule gives it; lines no rule flags are absent."""
    active = log.active_error_rules
    severities = {rule.id: SEVERITY_RANK[rule.severity] for rule in active}
    rank: dict[int, int] = {}
    for line, rule_id in _matched_lines(text, log, tuple((r.id, r.regex) for r in active)):
        severity = severities[rule_id]
        if severity < rank.get(line, len(SEVERITY_RANK)):
            rank[line] = severity
    return rank


def tally_lines(text: str, log: Log) -> dict[int, frozenset[str]]:
    """Line index -> what the pack's tally rules say of it (`counts`, `clean`): the lines where
    a run sums itself up, found by the same scan as the error rules."""
    active = log.active_tally_rules
    says = {rule.id: rule.says for rule in active}
    found: dict[int, frozenset[str]] = {}
    for line, rule_id in _matched_lines(text, log, tuple((r.id, r.regex) for r in active)):
        found[line] = found.get(line, frozenset()) | {says[rule_id]}
    return found


def _matched_lines(
    text: str, log: Log, rules: tuple[tuple[str, re.Pattern[str]], ...]
) -> list[tuple[int, str]]:
    """(line index, rule id) for every match of the rules, prefixes removed first."""
    if not rules:
        return []
    scanned = _without_prefixes(text, log)
    starts = text_line_starts(scanned)
    # A match may begin on the newline before its line (`(?:^|\s)ERROR`); its last character
    # always sits on the matched line.
    return [
        (bisect_right(starts, max(match.start, match.end - 1)) - 1, match.rule_id)
        for match in _error_scanner(rules).find(scanned)
    ]


@lru_cache(maxsize=8)
def _error_scanner(rules: tuple[tuple[str, re.Pattern[str]], ...]) -> SecretScanner:
    """The error rules as scanner detectors: no keywords, entropy or allowlist, so each one's
    findings are its regex's non-empty matches, exactly as `finditer` gives them, found by the
    secret scanner's windowed engine (a match is tried on line-bound windows, so one very long
    line does not make every rule run to its end from every start)."""
    return SecretScanner(SecretDetector(rule_id, regex, (), None, ()) for rule_id, regex in rules)


def _without_prefixes(text: str, log: Log) -> str:
    prefix = log.line_prefix_regex
    return text if prefix is None else prefix.sub("", text)
