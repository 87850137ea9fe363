"""Column widths for the browser's tables, worked out from the width the table has.

A `DataTable` sizes each column to its widest cell, so a long title used to push the project
and message-count columns off screen and leave a search hit ten characters. Here the narrow
facts (a time, a role, a count) get fixed widths, a name gets a share of what is left within
bounds, and the text a person reads (a session's title, a hit's words) gets the rest; a cell
longer than its column ends in an ellipsis.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from capy.vault.tui.printable import printable

# Cells DataTable adds each side of a column (its default `cell_padding`).
CELL_PADDING = 1
# Below this, the time a hit was written is left out so that its text keeps room.
HIT_TIME_MIN_WIDTH = 110


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    justify: str = "left"


def _share(total: int, ratio: float, least: int, most: int) -> int:
    return max(least, min(most, int(total * ratio)))


def _content(width: int, columns: int) -> int:
    return max(columns, width - 2 * CELL_PADDING * columns)


def session_columns(width: int) -> list[Column]:
    """started | title (the rest) | project (a share) | msgs, fitting `width` cells."""
    content = _content(width, 4)
    started, msgs = 16, 5
    project = _share(content, 0.2, 8, 40)
    title = max(8, content - started - msgs - project)
    return [
        Column("started", "started", started),
        Column("title", "title", title),
        Column("project", "project", project),
        Column("msgs", "msgs", msgs, "right"),
    ]


def hit_columns(width: int) -> list[Column]:
    """session title (a share) | role | [time] | hit text (the rest), fitting `width` cells."""
    with_time = width >= HIT_TIME_MIN_WIDTH
    content = _content(width, 4 if with_time else 3)
    role, time = 9, 16 if with_time else 0
    session = _share(content, 0.22, 12, 40)
    text = max(8, content - session - role - time)
    columns = [Column("session", "session", session), Column("role", "role", role)]
    if with_time:
        columns.append(Column("time", "time", time))
    return [*columns, Column("hit", "hit", text)]


def clipped(text: str, width: int, *, keep_end: bool = False) -> Text:
    """One line of at most `width` cells: cut with an ellipsis at the end, or at the start
    when the end says more (a project's folder name)."""
    line = printable(" ".join(text.split()))
    if keep_end and cell_len(line) > width > 1:
        line = line[-width:]
        while cell_len(line) > width - 1:
            line = line[1:]
        return Text("…" + line, no_wrap=True)
    result = Text(line, no_wrap=True, overflow="ellipsis")
    result.truncate(width, overflow="ellipsis")
    return result
