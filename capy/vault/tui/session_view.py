"""One archived session in the browser: its messages in order, each tool result (and harness
text) folded into a `Collapsible` whose title is the `capy vault show` summary line, Edit/Write
diffs coloured line by line, and a find bar that jumps between the messages holding some words.
Text from the transcript is never read as markup."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Footer, Header, Input, Static

from capy.sessions.model import Message
from capy.vault.render import (
    Fold,
    LoadedSession,
    call_index,
    fold_of,
    header_facts,
    message_heading,
    session_parts,
)
from capy.vault.tui.find import FindInput, find_pattern, marked, shown_text
from capy.vault.tui.printable import printable, printable_text

# Unified-diff line prefixes and their styles; the header lines come first so that `---` is
# not taken for a removed line.
_DIFF_STYLES = (
    ("+++", "bold"),
    ("---", "bold"),
    ("@@", "cyan"),
    ("+", "green"),
    ("-", "red"),
)
# Messages mounted at a time: a few hundred widgets mount in well under a second.
WINDOW = 100
_ROLE_STYLES = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta"}


def diff_text(diff: str) -> Text:
    """A unified diff as rich Text: added lines green, removed red, hunk headers cyan."""
    text = Text()
    for line in diff.splitlines():
        style = next((style for prefix, style in _DIFF_STYLES if line.startswith(prefix)), "")
        text.append(line + "\n", style=style)
    text.rstrip()
    return printable_text(text)


def message_text(message: Message) -> Text:
    """A message shown in full: a role line, its text, and the calls it makes."""
    text = Text()
    text.append(
        f"{message_heading(message)}\n",
        style=_ROLE_STYLES.get(message.role, "bold"),
    )
    text.append(message.text)
    for call in message.tool_calls:
        text.append(f"\n→ {call.summary or call.tool}", style="dim")
    return printable_text(text)


class FoldView(Collapsible):
    """A folded tool result (or harness text): its summary line as the title; the body is
    built the first time it is unfolded, since most folds of a long session never are."""

    def __init__(self, message: Message, fold: Fold, *, collapsed: bool = True) -> None:
        title = Content(printable(f"{message_heading(message)} · {fold.line}"))
        flags = (("error", fold.is_error), ("diff", fold.is_diff))
        classes = " ".join(["fold", *(name for name, flag in flags if flag)])
        body = [] if collapsed else [self._body(fold)]
        super().__init__(*body, title=title, collapsed=collapsed, classes=classes)  # type: ignore[arg-type]
        self.fold = fold
        self._built = not collapsed
        # Set while the whole screen folds or unfolds: the screen keeps the reader's place, so
        # this fold must not scroll itself into view as a fold toggled on its own does.
        self._stay = False

    @staticmethod
    def _body_text(fold: Fold) -> Text:
        return diff_text(fold.body) if fold.is_diff else Text(printable(fold.body))

    @classmethod
    def _body(cls, fold: Fold) -> Static:
        return Static(cls._body_text(fold), classes="body")

    async def show_found(self, pattern: re.Pattern[str] | None) -> None:
        """Unfold in place with the matches of `pattern` marked (None: unmarked)."""
        await self.build_body()
        self.query_one(".body", Static).update(marked(self._body_text(self.fold), pattern))
        if pattern is not None:
            self.set_collapsed_in_place(False)

    async def build_body(self) -> None:
        """Mount the body now (hidden while folded), so unfolding changes no layout later."""
        if not self._built:
            self._built = True
            await self.query_one(Collapsible.Contents).mount(self._body(self.fold))

    def set_collapsed_in_place(self, collapsed: bool) -> None:
        """Fold or unfold without scrolling to this fold (for a toggle of every fold)."""
        if self.collapsed != collapsed:
            self._stay = True
            self.collapsed = collapsed

    def scroll_visible(self, *args: Any, **kwargs: Any) -> None:
        # Collapsible calls this once after each toggle; a toggle in place swallows that call.
        if self._stay:
            self._stay = False
            return
        super().scroll_visible(*args, **kwargs)

    async def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self:
            await self.build_body()


class SessionScreen(Screen):
    """A session's messages, a window of them at a time (mounting thousands of widgets takes
    seconds); opened at `target` (a search hit's message) when one is given."""

    AUTO_FOCUS = "#messages"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("r", "toggle_results", "Folds"),
        Binding("slash,ctrl+f", "open_find", "Find"),
        Binding("n", "find_step(1)", "Next"),
        Binding("N", "find_step(-1)", "Previous", show=False),
        Binding("j", "scroll_messages(1)", "Down", show=False),
        Binding("k", "scroll_messages(-1)", "Up", show=False),
        Binding("R", "restore", "Restore"),
        Binding("U", "resume", "Resume"),
    ]
    DEFAULT_CSS = """
    SessionScreen #messages { padding: 0 1; }
    SessionScreen .message { margin: 1 0 0 0; }
    SessionScreen .part { margin: 1 0 0 0; text-style: bold reverse; }
    SessionScreen Collapsible { margin: 1 0 0 0; border-top: none; padding-bottom: 0; }
    SessionScreen Collapsible.error CollapsibleTitle { color: $error; }
    SessionScreen .target { background: $boost; }
    SessionScreen .found { background: $accent 30%; }
    SessionScreen #findbar { dock: bottom; height: auto; display: none; }
    SessionScreen #findbar.open { display: block; }
    SessionScreen #find { width: 1fr; }
    SessionScreen #found-count { width: auto; padding: 1 1 0 1; }
    SessionScreen .more { width: 1fr; margin: 1 0 0 0; }
    """

    def __init__(self, loaded: LoadedSession, target: Message | None = None) -> None:
        super().__init__()
        self.loaded = loaded
        self.target = target
        self.calls = call_index(loaded.session)
        # The session as one sequence: a sidecar's heading (a str), then its messages.
        self.items: list[str | Message] = []
        for heading, messages in session_parts(loaded.session):
            self.items += [heading] if heading else []
            self.items += messages
        at = next((n for n, item in enumerate(self.items) if item is target), 0)
        self.start = max(0, at - WINDOW // 4)
        self.end = min(len(self.items), self.start + WINDOW)
        self._widgets: dict[int, Widget] = {}  # an item's index -> its widget
        # The find: the items whose shown text matches, and which of them is shown as found.
        self.pattern: re.Pattern[str] | None = None
        self.matches: list[int] = []
        self.found: int | None = None  # an index into `matches`
        self._marked: int | None = None  # the item shown with the find's words marked
        self._texts: list[str] | None = None  # each item's shown text, made on the first find

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="messages"):
            facts = [fact for fact in header_facts(self.loaded) if fact]
            yield Static(Text(printable("\n".join(facts)), style="dim"), classes="facts")
            yield Button("", id="earlier", classes="more", compact=True)
            yield from self._build(self.start, self.end)
            yield Button("", id="later", classes="more", compact=True)
        with Horizontal(id="findbar"):
            yield FindInput(
                placeholder="find in this session, then Enter (n/N: next/previous)", id="find"
            )
            yield Static("", id="found-count")
        yield Footer()

    def _build(self, first: int, last: int) -> list[Widget]:
        widgets: list[Widget] = []
        for number, item in enumerate(self.items[first:last], start=first):
            if isinstance(item, str):
                widget: Widget = Static(Text(printable(item)), classes="part")
            elif (fold := fold_of(item, self.calls)) is not None:
                widget = FoldView(item, fold, collapsed=item is not self.target)
            else:
                widget = Static(message_text(item), classes=f"message {item.role}")
            self._widgets[number] = widget
            widgets.append(widget)
        return widgets

    def on_mount(self) -> None:
        self.title = printable(self.loaded.label)
        self.sub_title = printable(self.loaded.title or "")
        self._label_more()
        widget = self.widget_for(self.target) if self.target is not None else None
        if widget is None:
            return
        widget.add_class("target")
        scroller = self.query_one("#messages", VerticalScroll)
        self.call_after_refresh(scroller.scroll_to_widget, widget, animate=False, top=True)

    def _label_more(self) -> None:
        for name, count, arrow in (
            ("earlier", self.start, "▲"),
            ("later", len(self.items) - self.end, "▼"),
        ):
            button = self.query_one(f"#{name}", Button)
            button.label = f"{arrow} {min(count, WINDOW)} {name} of {count} not shown"
            button.display = count > 0

    def on_button_pressed(self, event: Button.Pressed) -> None:
        scroller = self.query_one("#messages", VerticalScroll)
        if event.button.id == "earlier":
            first = max(0, self.start - WINDOW)
            scroller.mount_all(self._build(first, self.start), after="#earlier")
            self.start = first
        elif event.button.id == "later":
            last = min(len(self.items), self.end + WINDOW)
            scroller.mount_all(self._build(self.end, last), before="#later")
            self.end = last
        self._label_more()

    def widget_for(self, message: Message) -> Widget | None:
        number = next((n for n, item in enumerate(self.items) if item is message), None)
        return None if number is None else self._widgets.get(number)

    async def show_window_around(self, number: int) -> None:
        """Mount the window of messages that holds item `number` (a find's jump)."""
        if self.start <= number < self.end:
            return
        scroller = self.query_one("#messages", VerticalScroll)
        await scroller.remove_children(list(self._widgets.values()))
        self._widgets = {}
        self.start = max(0, number - WINDOW // 4)
        self.end = min(len(self.items), self.start + WINDOW)
        await scroller.mount_all(self._build(self.start, self.end), after="#earlier")
        self._label_more()

    def action_scroll_messages(self, lines: int) -> None:
        self.query_one("#messages", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_open_find(self) -> None:
        self.query_one("#findbar").add_class("open")
        self.query_one("#find", Input).focus()

    def action_close_find(self) -> None:
        """Hide the find bar; n and N still step through what it found."""
        self.query_one("#findbar").remove_class("open")
        self.query_one("#messages", VerticalScroll).focus()

    async def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "find":
            return
        await self._unmark()
        self.pattern = find_pattern(event.value)
        if self._texts is None:
            self._texts = [
                shown_text(item, self.calls, self._message_text(item)) for item in self.items
            ]
        pattern = self.pattern
        self.matches = [n for n, text in enumerate(self._texts) if pattern and pattern.search(text)]
        self.found = None
        self._count_label()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "find":
            await self.action_find_step(1)

    @staticmethod
    def _message_text(item: str | Message) -> Text:
        return Text(printable(item)) if isinstance(item, str) else message_text(item)

    def _count_label(self) -> None:
        count = len(self.matches)
        if self.pattern is None:
            label = ""
        elif not count:
            label = "no message matches"
        elif self.found is None:
            label = f"{count} message{'' if count == 1 else 's'} match"
        else:
            label = f"{self.found + 1} of {count}"
        self.query_one("#found-count", Static).update(label)

    async def action_find_step(self, step: int) -> None:
        """Go to the next (1) or previous (-1) message that matches the find."""
        if not self.matches:
            if self.pattern is None:
                self.action_open_find()
            else:
                self.notify("no message in this session matches", markup=False)
            return
        await self._unmark()
        if self.found is not None:
            self.found = (self.found + step) % len(self.matches)
        else:
            self.found = 0 if step > 0 else len(self.matches) - 1
        number = self.matches[self.found]
        await self.show_window_around(number)
        widget = await self._mark(number, self.pattern)
        self._marked = number
        self._count_label()
        if widget is not None:
            scroller = self.query_one("#messages", VerticalScroll)
            self.call_after_refresh(scroller.scroll_to_widget, widget, animate=False, top=True)

    async def _unmark(self) -> None:
        if self._marked is not None:
            await self._mark(self._marked, None)
            self._marked = None

    async def _mark(self, number: int, pattern: re.Pattern[str] | None) -> Widget | None:
        """Show item `number` with the find's matches marked (None: as it was)."""
        widget = self._widgets.get(number)
        if isinstance(widget, FoldView):
            await widget.show_found(pattern)
        elif isinstance(widget, Static):
            widget.update(marked(self._message_text(self.items[number]), pattern))
        if widget is not None:
            widget.set_class(pattern is not None, "found")
        return widget

    def action_restore(self) -> None:
        self.app.ask_restore(self.loaded.label)  # type: ignore[attr-defined]

    def action_resume(self) -> None:
        self.app.ask_resume(self.loaded.label)  # type: ignore[attr-defined]

    async def action_toggle_results(self) -> None:
        scroller = self.query_one("#messages", VerticalScroll)
        # The reader stays at the message at the top of the view: every body is mounted before
        # any fold changes, no fold scrolls itself, and one scroll after the next layout puts
        # that message back at the top. The top is the row on screen (scroll_offset, rounded):
        # scroll_y can hold a fraction (a scroll that started during an animation), and the
        # message above, with a fraction of a row in view, is not what the reader sees.
        top_row = scroller.scroll_offset.y
        anchor = next((w for w in scroller.children if w.virtual_region.bottom > top_row), None)
        folds = list(self.query(FoldView))
        unfold = any(fold.collapsed for fold in folds)
        if unfold:
            for fold in folds:
                await fold.build_body()
        for fold in folds:
            fold.set_collapsed_in_place(not unfold)
        if anchor is not None:
            self.call_after_refresh(self._put_at_top, anchor)

    def _put_at_top(self, widget: Widget) -> None:
        """Scroll `widget` to the top now, to a whole row: the layout is the one just made."""
        scroller = self.query_one("#messages", VerticalScroll)
        top = widget.virtual_region_with_margin.y
        scroller.scroll_to(y=top, animate=False, immediate=True)
