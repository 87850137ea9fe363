"""`capy memory browse`: every record in a table (a filter narrows it as one types), and the
selected record whole below: its counts, its version chain, and the capsules it was learned from
(kind, time, session, what they said). It shows what `capy memory show` shows; it changes
nothing."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Static

COLUMNS = (("id", 10), ("type", 13), ("status", 12), ("conf", 6), ("+/-", 7), ("text", 80))


def record_matches(record: dict[str, Any], words: list[str]) -> bool:
    """Every word (lower-cased) is in the record's id, type, status or text."""
    haystack = " ".join((record["id"], record["type"], record["status"], record["text"])).lower()
    return all(word in haystack for word in words)


def detail_text(record: dict[str, Any], provenance: list[dict[str, Any]]) -> str:
    """The record whole, as the lower pane shows it (rich markup, the record's text escaped)."""
    lines = [
        f"[b]{record['type']}[/b] {record['id']}  {record['status']}, "
        f"confidence {record['confidence']:.2f}, helpful {record['helpful']}, "
        f"harmful {record['harmful']}, failures {record.get('failures', 0)}",
        escape(record["text"]),
    ]
    if record.get("supersedes"):
        lines.append(f"supersedes {record['supersedes']}")
    if record.get("superseded_by"):
        lines.append(f"superseded by {record['superseded_by']}")
    if record.get("block_class"):
        state = "blocks" if record.get("blocking", True) else "blocking switched off"
        lines.append(f"{state}: {record['block_class']}")
    lines.append(f"sessions: {escape(', '.join(record.get('sessions', ())))}")
    lines.append(f"[b]learned from {len(provenance)} capsule(s)[/b]")
    for item in provenance:
        head = f"- {item['kind']} {item['id'][:12]} {item['at']} session {item['session']}"
        lines.append(escape(head))
        lines.extend(f"    {escape(line)}" for line in item["text"].splitlines()[:6])
    return "\n".join(lines)


class MemoryBrowser(App):
    """Records above, the selected one below; / to filter, Esc back to the table, q to quit."""

    TITLE = "capy memory"
    CSS = "#records { height: 1fr; } #detail { height: 1fr; border-top: solid $accent; }"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("slash", "focus('filter')", "Filter"),
        Binding("escape", "focus('records')", "Records", show=False),
    ]

    def __init__(
        self, records: list[dict[str, Any]], provenance: dict[str, list[dict[str, Any]]]
    ) -> None:
        super().__init__()
        self.records = records
        self.provenance = provenance
        self.shown: list[dict[str, Any]] = list(records)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter: words in the id, type, status or text", id="filter")
        yield DataTable(id="records", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="detail"):
            yield Static(id="record")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#records", DataTable)
        for label, width in COLUMNS:
            table.add_column(label, width=width, key=label)
        self._fill()
        table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        words = event.value.lower().split()
        self.shown = [record for record in self.records if record_matches(record, words)]
        self._fill()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        record = next((item for item in self.shown if item["id"] == key), None)
        self._show(record)

    def _fill(self) -> None:
        table = self.query_one("#records", DataTable)
        table.clear()
        for record in self.shown:
            counts = f"{record['helpful']}/{record['harmful']}"
            cells = (
                record["id"][:8],
                record["type"],
                record["status"],
                f"{record['confidence']:.2f}",
                counts,
                " ".join(record["text"].split())[:200],
            )
            table.add_row(*cells, key=record["id"])
        self._show(self.shown[0] if self.shown else None)

    def _show(self, record: dict[str, Any] | None) -> None:
        pane = self.query_one("#record", Static)
        if record is None:
            pane.update("no record matches the filter" if self.records else "no records yet")
            return
        pane.update(detail_text(record, self.provenance.get(record["id"], [])))
