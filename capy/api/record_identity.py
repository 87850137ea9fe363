"""The line that names a record of a key-value report, for an answer found deep inside it.

`openssl x509 -text`, `dpkg -s`, `kubectl describe` print one record after another as
`Key: value` lines; the line that answers a question ("which certificate has an elliptic curve
key": `NIST CURVE: P-384`) sits a dozen lines from the one that says which record it is
(`Subject: ... CN=...`), past any context a reply shows. An anchor line in such a record brings
its record's identity line with it: the first line of the record that the executor pack's
`record_identity` pattern matches. A record is the run of indented lines under a line at the
margin (for an indented anchor), or the run of lines between blank ones (for an anchor at the
margin), within `record_identity_reach` lines of the anchor either way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def record_identities(
    lines: Sequence[str], first: int, last: int, pattern: re.Pattern[str], reach: int
) -> dict[int, int]:
    """Line -> the identity line of its record, for the lines `first`..`last` of `lines`
    that have one other than themselves."""
    found: dict[int, int] = {}
    bounds: dict[tuple[int, int], int | None] = {}  # each record scanned once
    for line in range(first, last + 1):
        if not lines[line].strip():
            continue
        record = _record(lines, line, reach)
        if record not in bounds:
            bounds[record] = next(
                (n for n in range(record[0], record[1] + 1) if pattern.match(lines[n])), None
            )
        identity = bounds[record]
        if identity is not None and identity != line:
            found[line] = identity
    return found


def _record(lines: Sequence[str], line: int, reach: int) -> tuple[int, int]:
    """(first, last) line of the record holding `line`."""
    indented = not _at_margin(lines[line])
    top = line
    while line - top < reach and top > 0 and not _blank(lines[top - 1]):
        top -= 1
        if indented and _at_margin(lines[top]):
            break  # the line at the margin opens the block
    bottom = line
    while bottom - line < reach and bottom + 1 < len(lines):
        below = lines[bottom + 1]
        if _blank(below) or (indented and _at_margin(below)):
            break
        bottom += 1
    return top, bottom


def _at_margin(text: str) -> bool:
    return bool(text.strip()) and not text[0].isspace()


def _blank(text: str) -> bool:
    return not text.strip()
