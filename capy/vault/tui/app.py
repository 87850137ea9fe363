"""The vault browser app: a session list with a filter box, a search box with its hits, and
the session screen they open. Everything it reads goes through `capy.vault` (list, search,
load); what it shows is redacted as `capy vault show` is. Restore and resume go through the
library behind `capy vault restore` and `capy vault resume`, each after a confirmation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from capy.store.migrations import CHUNK_ORDINAL_BITS
from capy.vault.render import minute
from capy.vault.tui.layout import Column, clipped, hit_columns, session_columns
from capy.vault.tui.printable import printable
from capy.vault.tui.session_view import SessionScreen

if TYPE_CHECKING:
    from capy.retrieval import SearchHit
    from capy.vault import Vault
    from capy.vault.catalog import SessionSummary
    from capy.vault.corpus import HitSession
    from capy.vault.resume import ResumePlan
    from capy.vault.tui import TuiStart

_ORDINAL_MASK = (1 << CHUNK_ORDINAL_BITS) - 1


def session_matches(item: SessionSummary, words: list[str]) -> bool:
    """Every word (lower-cased) is in the session's id, title or project."""
    haystack = " ".join((item.label, item.title or "", item.project or "")).lower()
    return all(word in haystack for word in words)


class KeyTable(DataTable):
    """A row table that j and k move through as the arrows do."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]


def fill_table(table: DataTable, columns: list[Column], rows: list[tuple[str, list[Text]]]) -> None:
    """Replace the table's columns and rows, keeping the cursor on the row it was on."""
    keep = None
    if table.row_count and table.cursor_row < table.row_count:
        keep = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
    table.clear(columns=True)
    for column in columns:
        table.add_column(
            Text(column.label, justify=column.justify), width=column.width, key=column.key
        )
    for key, cells in rows:
        table.add_row(*cells, key=key)
    keys = [key for key, _ in rows]
    if keep in keys:
        table.move_cursor(row=keys.index(keep), animate=False)


def table_width(table: DataTable) -> int:
    """The cells a table has for its columns (its scrollbar gutter is always kept)."""
    return table.scrollable_content_region.width or table.app.size.width


class BrowseScreen(Screen):
    """Sessions (filtered as one types) above, search hits (on Enter in the search box) below.
    Focus starts on the list; / or Ctrl+F go to the filter, s or Ctrl+S to the search, Esc
    back to the list."""

    AUTO_FOCUS = "#sessions"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "Quit"),
        Binding("slash,ctrl+f", "focus('#filter')", "Filter"),
        Binding("s,ctrl+s", "focus('#search')", "Search"),
        Binding("escape", "focus('#sessions')", "List", show=False),
        Binding("R", "restore", "Restore"),
        Binding("U", "resume", "Resume"),
    ]
    DEFAULT_CSS = """
    BrowseScreen DataTable { height: 1fr; scrollbar-gutter: stable; }
    BrowseScreen #hits { display: none; }
    BrowseScreen #hits.shown { display: block; }
    """

    def __init__(self, vault: Vault, start: TuiStart) -> None:
        super().__init__()
        self.vault = vault
        self.start = start
        self.sessions: list[SessionSummary] = []
        self.hits: dict[str, SearchHit] = {}  # row key (the hit's row id) -> hit
        self.places: dict[int, HitSession] = {}  # a hit's row id -> its session's facts
        self.filter_words: list[str] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter sessions: words of the title, project or id", id="filter")
        yield KeyTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="search messages, then Enter", id="search")
        yield KeyTable(id="hits", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        from capy.vault.catalog import list_sessions

        self.sessions = list_sessions(self.vault, self.start.project)
        self.show_sessions()
        if self.start.queries:
            self.query_one("#search", Input).value = " ".join(self.start.queries)
            self.run_search(list(self.start.queries))

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self.refit)

    def refit(self) -> None:
        """Lay the rows out again for the width the tables now have."""
        self.show_sessions()
        self.show_hits()

    def show_sessions(self) -> None:
        table = self.query_one("#sessions", DataTable)
        columns = session_columns(table_width(table))
        title, project = columns[1].width, columns[2].width
        rows = [
            (
                item.label,
                [
                    Text(minute(item.started_at) or "?"),
                    clipped(item.title or item.label, title),
                    clipped(item.project or "?", project, keep_end=True),
                    Text(str(item.messages), justify="right"),
                ],
            )
            for item in self.sessions
            if session_matches(item, self.filter_words)
        ]
        fill_table(table, columns, rows)
        self.sub_title = f"{table.row_count} of {len(self.sessions)} sessions"

    def run_search(self, queries: list[str]) -> None:
        from capy.vault.corpus import VaultScope, hit_sessions, search_vault

        scope = self.start.scope or VaultScope(project=self.start.project)
        try:
            results = search_vault(self.vault, queries, roles=self.start.roles, scope=scope)
        except ValueError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self.hits = {}
        for hit in (hit for result in results for hit in result.hits):
            self.hits.setdefault(str(hit.chunk_id), hit)  # once when two queries find it
        self.places = hit_sessions(self.vault, [hit.chunk_id for hit in self.hits.values()])
        self.show_hits()
        table = self.query_one("#hits", DataTable)
        table.set_class(bool(self.hits), "shown")
        if self.hits:
            table.focus()
        else:
            self.notify(f"no message matches {' / '.join(queries)!r}", markup=False)

    def show_hits(self) -> None:
        table = self.query_one("#hits", DataTable)
        if not self.hits:
            table.clear()
            return
        columns = hit_columns(table_width(table))
        widths = {column.key: column.width for column in columns}
        rows = []
        for key, hit in self.hits.items():
            place = self.places.get(hit.chunk_id)
            first_line = next(iter(hit.snippet.splitlines()), "")
            what = f"{hit.title} › {first_line}" if hit.title else first_line
            cells = [clipped((place and place.title) or hit.source_label, widths["session"])]
            cells.append(Text(hit.kind))
            if "time" in widths:
                cells.append(Text(minute(place.timestamp if place else None)))
            rows.append((key, [*cells, clipped(what, widths["hit"])]))
        fill_table(table, columns, rows)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.filter_words = event.value.lower().split()
            self.show_sessions()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search" and event.value.strip():
            self.run_search([event.value])
        elif event.input.id == "filter":
            self.query_one("#sessions", DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        if event.data_table.id == "sessions":
            self.browser.open_session(key)
        elif key in self.hits:
            hit = self.hits[key]
            self.browser.open_session(hit.source_label, hit.chunk_id & _ORDINAL_MASK)

    @property
    def browser(self) -> VaultBrowser:
        browser = self.app
        assert isinstance(browser, VaultBrowser)
        return browser

    def chosen_session(self) -> str | None:
        """The session under the cursor: of the hits when they have focus, else of the list."""
        hits, sessions = self.query_one("#hits", DataTable), self.query_one("#sessions", DataTable)
        for table in (hits, sessions) if hits.has_focus else (sessions,):
            if table.row_count:
                key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
                return self.hits[key].source_label if table is hits else key
        return None

    def action_restore(self) -> None:
        self.browser.ask_restore(self.chosen_session())

    def action_resume(self) -> None:
        self.browser.ask_resume(self.chosen_session())


class VaultBrowser(App["ResumePlan | None"]):
    """Browse, filter, search, read, restore and resume the vault's sessions; `run()` returns
    the plan of a session the person chose to resume."""

    TITLE = "capy vault"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]

    def __init__(self, vault: Vault, start: TuiStart) -> None:
        super().__init__()
        self.vault = vault
        self.start = start

    def notify(self, message: str, **options: Any) -> None:  # type: ignore[override]
        # Notices quote labels, paths and queries; none may reach the terminal as a command.
        super().notify(printable(message), **options)

    def get_default_screen(self) -> Screen:
        return BrowseScreen(self.vault, self.start)

    def on_mount(self) -> None:
        if self.start.session:
            self.open_session(self.start.session)

    def open_session(self, wanted: str, row_ordinal: int | None = None) -> SessionScreen | None:
        """Push the session's screen, at the message of a search row when one is given."""
        from capy.vault.errors import VaultError
        from capy.vault.render import load_session

        try:
            loaded = load_session(self.vault, wanted)
        except VaultError as error:
            self.notify(error.message, severity="error", timeout=10, markup=False)
            return None
        target = loaded.message_for_row(row_ordinal) if row_ordinal is not None else None
        screen = SessionScreen(loaded, target)
        self.push_screen(screen)
        return screen

    def ask_restore(self, label: str | None) -> None:
        """Ask where to restore the session's files, restore them, and say what was done."""
        from capy.vault.errors import VaultError
        from capy.vault.restore import restore_folder
        from capy.vault.tui.dialogs import RestoreDialog

        if label is None:
            self.notify("no session to restore here", markup=False)
            return
        try:
            folder = restore_folder(self.vault, label)
        except VaultError as error:
            self.notify(error.message, severity="error", timeout=10, markup=False)
            return

        def done(summary: str | None) -> None:
            if summary:
                self.notify(summary, title="restored", timeout=10, markup=False)

        self.push_screen(RestoreDialog(self.vault, label, folder), done)

    def ask_resume(self, label: str | None) -> None:
        """Confirm, restore where the agent looks, then close with the plan to run."""
        from capy.rules import load_rules
        from capy.vault.errors import VaultError
        from capy.vault.resume import resume_target
        from capy.vault.tui.dialogs import ResumeDialog

        if label is None:
            self.notify("no session to resume here", markup=False)
            return
        try:
            target = resume_target(self.vault, label, load_rules())
        except VaultError as error:
            self.notify(error.message, severity="error", timeout=10, markup=False)
            return

        def done(plan: ResumePlan | None) -> None:
            if plan is not None:
                self.exit(plan)

        self.push_screen(ResumeDialog(self.vault, target), done)
