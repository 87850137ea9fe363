"""Which lines of a text the chunking pack's error rules flag, and how badly.

One scan serves the log chunker (a chunk per flagged line) and the intent reply (its errors and
failures list), so both see the same lines. Each rule runs once over the whole text (finditer),
never once per line, so the cost stays a few regex passes however long the log is.

A CI runner or `docker build` writes something in front of every line (`2022-07-26T16:33:03.56Z `,
`#14 2.104 `); the pack's `log.line_prefix` is removed from each line first, so a rule anchored at
the start of a line (`^--- FAIL:`, `^  1) `) still finds the runner's own text. Removing it keeps
the line count, so line numbers stay those of the original text.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from capy.rules.views.chunking import Severity

if TYPE_CHECKING:
    from capy.rules.views.chunking import Log

SEVERITY_RANK = {severity: rank for rank, severity in enumerate(Severity)}


def flagged_lines(text: str, log: Log) -> dict[int, int]:
    """Line index -> the worst severity rank (0 error, 1 failure, 2 warning) any active error
    rule gives it; lines no rule flags are absent."""
    scanned = _without_prefixes(text, log)
    starts = _line_starts(scanned)
    rank: dict[int, int] = {}
    for rule in log.active_error_rules:
        severity = SEVERITY_RANK[rule.severity]
        for match in rule.regex.finditer(scanned):
            # A match may begin on the newline before its line (`(?:^|\s)ERROR`); its last
            # character always sits on the flagged line.
            line = bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            if severity < rank.get(line, len(SEVERITY_RANK)):
                rank[line] = severity
    return rank


def _without_prefixes(text: str, log: Log) -> str:
    prefix = log.line_prefix_regex
    return text if prefix is None else prefix.sub("", text)


def _line_starts(text: str) -> list[int]:
    starts, offset = [0], text.find("\n")
    while offset != -1:
        starts.append(offset + 1)
        offset = text.find("\n", offset + 1)
    return starts
