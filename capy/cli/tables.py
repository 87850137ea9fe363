"""Tables and agent markdown for a person: rich on a terminal, plain columns in a pipe.

The library's replies are markdown written for an agent; `capy stats` and the other CLI twins
print them for a person. On a terminal tables become rich tables and `# headings`, `**bold**`
and `` `code` `` become styles; colour follows rich's rules, so NO_COLOR (and a dumb terminal)
turns it off. Anywhere else (a pipe, a file, CI) the text stays as it was, except that a table
becomes plain columns aligned with spaces, a dashed line under the header and no box drawing:
greppable, `cut`-able, and readable in a log. Everything passes through `shown` first, so it is
redacted and its control characters are neutralised before it is laid out; cells are rich
`Text`, never markup, so stored text cannot style or hide itself.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capy.cli.output import shown

# A markdown table's separator row: | --- | :---: | ---: |
_SEPARATOR = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")
_INLINE = re.compile(r"\*\*(?P<bold>[^*\n]+)\*\*|`(?P<code>[^`\n]+)`")
_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}
COLUMN_GAP = "  "


@dataclass(frozen=True)
class Cell:
    """A table cell with a style for the terminal (`ok`, `warn`, `fail`, or a rich style)."""

    text: str
    style: str | None = None


@dataclass(frozen=True)
class Table:
    """Rows under column headings, for a terminal or as plain text."""

    columns: Sequence[str]
    rows: Sequence[Sequence[str | Cell]]
    right_aligned: frozenset[int] = frozenset()  # column indexes, for numbers


def on_terminal(file: Any = None) -> bool:
    stream = file if file is not None else sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_markdown(text: str, *, file: Any = None) -> None:
    """An agent reply for a person (see the module's note), redacted."""
    file = file if file is not None else sys.stdout
    blocks = _blocks(shown(text).splitlines())
    if not on_terminal(file):
        for block in blocks:
            print(_plain_table(block) if isinstance(block, Table) else block, file=file)
        return
    console = _console(file)
    for block in blocks:
        if isinstance(block, Table):
            console.print(_rich_table(block))
        elif isinstance(block, Verbatim):
            from rich.text import Text

            console.print(Text(block), soft_wrap=True)
        else:
            console.print(_styled_line(block), soft_wrap=True)


def print_table(
    table: Table, *, title: str | None = None, file: Any = None, redact: bool = True
) -> None:
    """`table` (cells not yet redacted) for a person: rich on a terminal, plain otherwise.
    `redact=False` is for text a person must see as written (their own rule files); control
    characters are neutralised either way."""
    file = file if file is not None else sys.stdout
    safe = Table(
        [shown(name, redact=redact) for name in table.columns],
        [[_shown_cell(cell, redact) for cell in row] for row in table.rows],
        table.right_aligned,
    )
    if not on_terminal(file):
        if title:
            print(shown(title, redact=redact), file=file)
        print(_plain_table(safe), file=file)
        return
    console = _console(file)
    if title:
        from rich.text import Text

        console.print(Text(shown(title, redact=redact), style="bold"))
    console.print(_rich_table(safe))


def _shown_cell(cell: str | Cell, redact: bool) -> Cell:
    if isinstance(cell, Cell):
        return Cell(shown(cell.text, redact=redact), cell.style)
    return Cell(shown(cell, redact=redact))


def _console(file: Any):
    from rich.console import Console

    return Console(file=file, highlight=False)


# --- markdown --------------------------------------------------------------------------------


class Verbatim(str):
    """A line inside a code fence (program output): shown exactly, never styled or parsed."""


def _blocks(lines: list[str]) -> list[str | Table]:
    """Lines as they are, with each markdown table (header, separator, rows) parsed; lines in
    a code fence are `Verbatim`."""
    blocks: list[str | Table] = []
    index, fence = 0, ""
    while index < len(lines):
        line = lines[index]
        opening = re.match(r"^(`{3,})", line)
        if fence or opening:
            if not fence:
                fence = opening.group(1)  # type: ignore[union-attr]
            elif line.strip() == fence:
                fence = ""
            blocks.append(Verbatim(line))
            index += 1
            continue
        if _is_row(line) and index + 1 < len(lines) and _SEPARATOR.match(lines[index + 1]):
            header, separator = _cells(line), _cells(lines[index + 1])
            rows, index = [], index + 2
            while index < len(lines) and _is_row(lines[index]):
                rows.append(_cells(lines[index]))
                index += 1
            right = frozenset(i for i, mark in enumerate(separator) if mark.endswith(":"))
            blocks.append(Table(header, rows, right))
            continue
        blocks.append(line)
        index += 1
    return blocks


def _is_row(line: str) -> bool:
    return line.startswith("|") and line.rstrip().endswith("|")


def _cells(line: str) -> list[str]:
    """A row's cells; `\\|` inside a cell is a literal bar."""
    inner = line.strip()[1:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


# --- plain -----------------------------------------------------------------------------------


def _cell_len(text: str) -> int:
    """Terminal columns of `text`: wide East Asian characters take two, combining marks none.
    rich.cells says the same, but importing it costs about a bare interpreter start, and a plain
    `capy stats | less` should not pay that for column widths."""
    import unicodedata

    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _plain_table(table: Table) -> str:
    cell_len = _cell_len

    def text(cell: str | Cell) -> str:
        return _unmarked(cell.text if isinstance(cell, Cell) else cell)

    grid = [[text(name) for name in table.columns], *([text(c) for c in r] for r in table.rows)]
    count = max(len(row) for row in grid)
    widths = [
        max((cell_len(row[i]) for row in grid if i < len(row)), default=0) for i in range(count)
    ]
    grid.insert(1, ["-" * width for width in widths])

    def line(row: list[str]) -> str:
        cells = []
        for i, width in enumerate(widths):
            cell = row[i] if i < len(row) else ""
            pad = " " * (width - cell_len(cell))
            cells.append(pad + cell if i in table.right_aligned else cell + pad)
        return COLUMN_GAP.join(cells).rstrip()

    return "\n".join(line(row) for row in grid)


def _unmarked(text: str) -> str:
    """A cell without its markdown emphasis: columns line up on what a person reads."""
    return _INLINE.sub(lambda match: match.group("bold") or match.group("code"), text)


# --- terminal --------------------------------------------------------------------------------


def _rich_table(table: Table):
    from rich.table import Table as RichTable

    rich = RichTable(show_edge=False, header_style="bold", pad_edge=False)
    for index, name in enumerate(table.columns):
        justify = "right" if index in table.right_aligned else "left"
        rich.add_column(_styled_line(name), justify=justify)
    for row in table.rows:
        rich.add_row(*(_styled_cell(cell) for cell in row))
    return rich


def _styled_cell(cell: str | Cell):
    if isinstance(cell, Cell):
        text = _styled_line(cell.text)
        if cell.style:
            text.stylize(_STYLES.get(cell.style, cell.style))
        return text
    return _styled_line(cell)


def _styled_line(line: str):
    """A markdown line as rich `Text`: headings bold, `**bold**` bold, `code` cyan."""
    from rich.text import Text

    heading = re.match(r"^(#{1,6})\s+(.*)$", line)
    if heading:
        style = "bold underline" if len(heading.group(1)) == 1 else "bold"
        return Text(heading.group(2), style=style)
    text, position = Text(), 0
    for match in _INLINE.finditer(line):
        text.append(line[position : match.start()])
        if match.group("bold") is not None:
            text.append(match.group("bold"), style="bold")
        else:
            text.append(match.group("code"), style="cyan")
        position = match.end()
    text.append(line[position:])
    return text
