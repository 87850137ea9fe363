"""Listings without a header line, read as tables for superlative intents.

`ls -l`, `tar -tv` and `du` print rows of cells with no line naming the columns, so
"the largest file in the archive" found no column to sort. When most of the output's lines
split into the same number of cells and one numeric column holds more distinct values than
any other (`ls -l` also prints a link count and a day of the month, which repeat), that
column is the measure the listing holds, and a superlative (never a threshold, which needs a
named field) sorts on it (`capy.api.intent_compare._column_score`). Lines of another width
(`ls -R`'s folder names and `total` lines) are not rows. A report whose rows are mostly one
message (yamllint's `wrong indentation: expected 4 but found 2` on line after line) splits as
evenly but holds no measure: its numbers are words of that message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.intent_compare import UNNAMED, _number, _numeric_columns, _Table
from capy.api.intent_compare_frequency import without_numbers

if TYPE_CHECKING:
    from capy.rules.views.intents import Compare

# A listing is read as a table when this share of its non-blank lines have one width.
_LISTING_SHARE = 0.8


def listing(lines: list[str], compare: Compare) -> list[_Table]:
    """A listing without a header (`ls -l`, `tar -tv`, `du`): most of the output's lines split
    into the same number of cells. Its columns have no names, so it is compared only on its
    one numeric column, the measure the listing holds (`_column_score`)."""
    body = [line for line in lines if line.strip()]
    counts: dict[int, int] = {}
    for line in body:
        counts[len(line.split())] = counts.get(len(line.split()), 0) + 1
    width, held = max(counts.items(), key=lambda item: (item[1], item[0]), default=(0, 0))
    if width < 2 or held < compare.min_rows or held < _LISTING_SHARE * len(body):
        return []
    table = _Table("", [f"{UNNAMED} {n + 1}" for n in range(width)])
    table.rows = [(line.rstrip(), line.split()) for line in body if len(line.split()) == width]
    numeric = _numeric_columns(table)
    distinct = sorted(
        ((len({cells[n] for _, cells in table.rows if _number(cells[n]) is not None}), n)
         for n in numeric),
        reverse=True,
    )  # fmt: skip
    # A measure varies from row to row. Rows that are mostly one message once their numbers
    # are masked (`expected 4 but found 2` on every indentation finding of a lint report that
    # happens to split as evenly) hold no measure, however few distinct values a column has:
    # 400 folders of 4096 bytes beside one large file is still a listing of sizes.
    if (
        not distinct
        or distinct[0][0] < 2
        or (len(distinct) > 1 and distinct[0][0] == distinct[1][0])
        or _one_message(table, compare)
    ):
        return []
    measure = distinct[0][1]
    # The other numeric columns are counts beside the measure: left out of the comparison.
    table.rows = [
        (line, [cell if n == measure or n not in numeric else "" for n, cell in enumerate(cells)])
        for line, cells in table.rows
    ]
    return [table]


def _one_message(table: _Table, compare: Compare) -> bool:
    """Whether most of the rows say the same thing once their numbers are masked (the
    search pack's `intents.compare.repeated_message_share`)."""
    said: dict[str, int] = {}
    for line, _ in table.rows:
        key = without_numbers(line)
        said[key] = said.get(key, 0) + 1
    return max(said.values(), default=0) > compare.repeated_message_share * len(table.rows)
