"""Lines dated the day an intent names, in whatever form the output prints dates.

"What was the weather on july 4th 2014" shares no word with `2014/07/04,0.0,23.9,...`: the
search core sees `july` and `4th`, the output holds digits. An intent naming a day (a month
word of the search pack's `intents.dates.months` with a day, a year optional) gets the
output's lines holding that day in the numeric and named forms tools print (ISO and its
slashed and dotted kin, the access log's `04/Jul/2014`, the US `07/04/2014`, `Jul 4, 2014`
and `4 July 2014`), the first `max_lines` of them, under the output's header line if it has one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from capy.api.output_excerpts import utf8_size

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.rules.views.intents import DateIntent

_ORDINAL = r"(?:st|nd|rd|th)?"


def date_section(stored: str, intent: str, rules: RuleSet) -> list[str]:
    """Markdown lines showing the output's lines dated the intent's day, or [] when the intent
    names no day or no line holds it."""
    dates = rules.view("search").intents.dates
    day = _named_day(intent, dates)
    if day is None:
        return []
    pattern = _line_pattern(*day, dates)
    lines = stored.split("\n")
    found = [line.rstrip() for line in lines if pattern.search(line)]
    if not found:
        return []
    cap = rules.view("search").intents.compare.max_row_bytes
    shown = [_clip(line, cap) for line in found[: dates.max_lines]]
    month, number, year = day
    named = f"{dates.months[month - 1][0].title()} {number}" + (f", {year}" if year else "")
    head = lines[0].rstrip() if lines and not re.search(r"\d", lines[0]) else ""
    title = f"### Lines dated {named} ({len(shown)} of {len(found):,})"
    return ["", title, *([_clip(head, cap)] if head and head not in shown else []), *shown]


def _named_day(intent: str, dates: DateIntent) -> tuple[int, int, int | None] | None:
    """(month, day, year or None) of the first day the intent names."""
    words = {word: number for number, group in enumerate(dates.months, 1) for word in group}
    month = "|".join(sorted(words, key=len, reverse=True))
    text = intent.lower()
    forms = (
        rf"\b(?P<m>{month})\.? (?P<d>\d{{1,2}}){_ORDINAL}\b(?:,? (?P<y>\d{{4}})\b)?",
        rf"\b(?P<d>\d{{1,2}}){_ORDINAL} (?:of )?(?P<m>{month})\b(?:,? (?P<y>\d{{4}})\b)?",
    )
    for form in forms:
        found = re.search(form, text)
        if found and 1 <= int(found["d"]) <= 31:
            year = int(found["y"]) if found["y"] else None
            return words[found["m"]], int(found["d"]), year
    return None


def _line_pattern(month: int, day: int, year: int | None, dates: DateIntent) -> re.Pattern[str]:
    names = "|".join(sorted(dates.months[month - 1], key=len, reverse=True))
    y = str(year) if year else r"\d{4}"
    m, d = rf"0?{month}", rf"0?{day}"
    forms = [
        rf"(?<!\d){y}[-/.]{m}[-/.]{d}(?!\d)",  # 2014-07-04, 2014/07/04, 2014.7.4
        rf"(?<!\d){d}/(?:{names})/{y}(?!\d)",  # 04/Jul/2014 (access logs)
        rf"(?<!\d){m}/{d}/{y}(?!\d)",  # 07/04/2014
        rf"\b(?:{names})\.? {d}{_ORDINAL},? {y}(?!\d)",  # Jul 4, 2014
        rf"(?<!\d){d}{_ORDINAL} (?:{names})\.?,? {y}(?!\d)",  # 4 July 2014
    ]
    if year is None:  # a log without years: `Jul  4 10:00:01` (syslog)
        forms.append(rf"\b(?:{names}) {{1,2}}{d}\b(?! ?\d{{4}})")
    return re.compile("|".join(forms), re.IGNORECASE)


def _clip(line: str, cap: int) -> str:
    data = line.encode("utf-8")
    return line if utf8_size(line) <= cap else data[:cap].decode("utf-8", "ignore") + "…"
