"""Listings without a header line, read as tables for superlative intents.

`ls -l`, `tar -tv` and `du` print rows of cells with no line naming the columns, so
"the largest file in the archive" found no column to sort. When most of the output's lines
split into the same number of cells and one numeric column holds more distinct values than
any other (`ls -l` also prints a link count and a day of the month, which repeat), that
column is the measure the listing holds (a column whose values barely vary is words of a
repeated message, never a measure), and a superlative (never a threshold, which needs a
named field) sorts on it (`capy.api.intent_compare._column_score`). Lines of another width
(`ls -R`'s folder names and `total` lines) are not rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.intent_compare import UNNAMED, _number, _numeric_columns, _Table

if TYPE_CHECKING:
    from capy.rules.views.intents import Compare

# A listing is read as a table when this share of its non-blank lines have one width.
_LISTING_SHARE = 0.8
# Its measure column holds at least this share of distinct values among its rows (sizes do;
# a number that is part of one repeated message does not).
_MEASURE_DISTINCT_SHARE = 0.1


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
    # A measure varies from row to row; a number repeated on most rows (`expected 4 but found
    # 2` on every indentation finding of a lint report that happens to split as evenly) is
    # words of a repeated message: sorting on it ranks nothing.
    if (
        not distinct
        or distinct[0][0] < max(2, _MEASURE_DISTINCT_SHARE * len(table.rows))
        or (len(distinct) > 1 and distinct[0][0] == distinct[1][0])
    ):
        return []
    measure = distinct[0][1]
    # The other numeric columns are counts beside the measure: left out of the comparison.
    table.rows = [
        (line, [cell if n == measure or n not in numeric else "" for n, cell in enumerate(cells)])
        for line, cells in table.rows
    ]
    return [table]
