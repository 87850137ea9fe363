"""XML reports read as tables for superlative and threshold intents.

A JUnit report (pytest, Maven Surefire, Gradle, jest-junit), a Cobertura coverage report or a
Checkstyle report prints its records as elements whose attributes are the fields:
`<testcase name="test_lazy" time="0.010" />`. "Which test took the longest" names no word of
the answer, and the report is often one long line, so a text search cannot find it. Elements of
one tag are the rows of one table, their attributes its columns, and each row shows as the
element's start tag verbatim. HTML pages are left alone: their attributes are markup.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from capy.api.intent_compare import _Table

if TYPE_CHECKING:
    from capy.rules.views.intents import Compare

_VALUE = r"\"[^\"<]*\"|'[^'<]*'"
# A start tag (or an empty element) with at least one attribute.
_ELEMENT = re.compile(rf"<([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:{_VALUE}))+)\s*/?>")
_ATTRIBUTE = re.compile(rf"([\w:.-]+)\s*=\s*({_VALUE})")
_HTML = re.compile(r"^\s*(?:<!doctype\s+html|<html\b)", re.IGNORECASE)


def xml_tables(stored: str, compare: Compare) -> list[_Table]:
    """One table per tag with at least the pack's `min_rows` elements, the most frequent tag
    first; [] for output that is not XML."""
    if not stored.lstrip().startswith("<") or _HTML.match(stored):
        return []
    groups: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for element in _ELEMENT.finditer(stored):
        fields = {name: value[1:-1] for name, value in _ATTRIBUTE.findall(element.group(2))}
        groups.setdefault(element.group(1), []).append((element.group(0), fields))
    tables = []
    for elements in sorted(groups.values(), key=len, reverse=True):
        if len(elements) < compare.min_rows:
            continue
        columns = list(dict.fromkeys(name for _, fields in elements for name in fields))
        table = _Table("", columns)
        for shown, fields in elements:
            table.rows.append((shown, [fields.get(name, "") for name in columns]))
        tables.append(table)
    return tables
