"""The vault browser app: a session list with a filter box, a search box with its hits, and
the session screen they open. Everything it reads goes through `capy.vault` (list, search,
load); what it shows is redacted as `capy vault show` is."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from capy.store.migrations import CHUNK_ORDINAL_BITS
from capy.vault.render import minute
from capy.vault.tui.session_view import SessionScreen

if TYPE_CHECKING:
    from capy.retrieval import SearchHit
    from capy.vault import Vault
    from capy.vault.catalog import SessionSummary
    from capy.vault.tui import TuiStart

_ORDINAL_MASK = (1 << CHUNK_ORDINAL_BITS) - 1


def session_matches(item: SessionSummary, words: list[str]) -> bool:
    """Every word (lower-cased) is in the session's id, title or project."""
    haystack = " ".join((item.label, item.title or "", item.project or "")).lower()
    return all(word in haystack for word in words)


class BrowseScreen(Screen):
    """Sessions (filtered as one types) above, search hits (on Enter) below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+f", "focus('filter')", "Filter"),
        Binding("ctrl+s", "focus('search')", "Search"),
        Binding("escape", "focus('sessions')", "Sessions", show=False),
    ]
    DEFAULT_CSS = """
    BrowseScreen DataTable { height: 1fr; }
    BrowseScreen #hits { height: 1fr; }
    """

    def __init__(self, vault: Vault, start: TuiStart) -> None:
        super().__init__()
        self.vault = vault
        self.start = start
        self.sessions: list[SessionSummary] = []
        self.hits: dict[str, SearchHit] = {}  # row key (the hit's row id) -> hit

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="filter sessions: words of the title, project or id", id="filter")
        yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="search messages, then Enter", id="search")
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        from capy.vault.catalog import list_sessions

        self.query_one("#sessions", DataTable).add_columns("started", "title", "project", "msgs")
        self.query_one("#hits", DataTable).add_columns("session", "role", "time", "hit")
        self.sessions = list_sessions(self.vault, self.start.project)
        self.show_sessions("")
        if self.start.queries:
            self.query_one("#search", Input).value = " ".join(self.start.queries)
            self.run_search(list(self.start.queries))

    def show_sessions(self, filter_text: str) -> None:
        table = self.query_one("#sessions", DataTable)
        table.clear()
        words = filter_text.lower().split()
        for item in self.sessions:
            if session_matches(item, words):
                table.add_row(
                    Text(minute(item.started_at) or "?"),
                    Text(item.title or item.label, overflow="ellipsis", no_wrap=True),
                    Text(item.project or "?"),
                    Text(str(item.messages), justify="right"),
                    key=item.label,
                )
        self.sub_title = f"{table.row_count} of {len(self.sessions)} sessions"

    def run_search(self, queries: list[str]) -> None:
        from capy.vault.corpus import VaultScope, hit_context, search_vault

        table = self.query_one("#hits", DataTable)
        table.clear()
        self.hits = {}
        scope = self.start.scope or VaultScope(project=self.start.project)
        try:
            results = search_vault(self.vault, queries, roles=self.start.roles, scope=scope)
        except ValueError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        for hit in (hit for result in results for hit in result.hits):
            self.hits.setdefault(str(hit.chunk_id), hit)  # once when two queries find it
        context = hit_context(self.vault, [hit.chunk_id for hit in self.hits.values()])
        for key, hit in self.hits.items():
            first_line = next(iter(hit.snippet.splitlines()), "")
            what = f"{hit.title} › {first_line}" if hit.title else first_line
            table.add_row(
                Text(hit.source_label),
                Text(hit.kind),
                Text(minute(context.get(hit.chunk_id, (None, ""))[1])),
                Text(what, no_wrap=True, overflow="ellipsis"),
                key=key,
            )
        if not self.hits:
            self.notify(f"no message matches {' / '.join(queries)!r}", markup=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.show_sessions(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "search" and event.value.strip():
            self.run_search([event.value])
        elif event.input.id == "filter":
            self.query_one("#sessions", DataTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = str(event.row_key.value)
        browser = self.app
        assert isinstance(browser, VaultBrowser)
        if event.data_table.id == "sessions":
            browser.open_session(key)
        elif key in self.hits:
            hit = self.hits[key]
            browser.open_session(hit.source_label, hit.chunk_id & _ORDINAL_MASK)


class VaultBrowser(App):
    """Browse, filter, search and read the vault's sessions."""

    TITLE = "capy vault"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit")]

    def __init__(self, vault: Vault, start: TuiStart) -> None:
        super().__init__()
        self.vault = vault
        self.start = start

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
