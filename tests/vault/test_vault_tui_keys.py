"""Every key the vault browser advertises, pressed with textual's pilot over a real vault.

The bindings are found by walking the browser's modules, so a binding added later fails
`test_every_advertised_binding_does_what_it_says` until CHECKS says what it should do."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import ModuleType

import pytest
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Collapsible, DataTable, Input

from capy.vault.tui import TuiStart, app, dialogs, find, session_view
from capy.vault.tui.app import BrowseScreen, VaultBrowser
from capy.vault.tui.dialogs import RestoreDialog, ResumeDialog
from capy.vault.tui.session_view import SessionScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
MODULES: tuple[ModuleType, ...] = (app, session_view, dialogs, find)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def advertised_bindings() -> list:
    """(class name, key, action) for every key of every BINDINGS a browser class declares."""
    cases = []
    for module in MODULES:
        for owner in vars(module).values():
            if not (isinstance(owner, type) and owner.__module__ == module.__name__):
                continue
            for binding in vars(owner).get("BINDINGS", ()):
                assert isinstance(binding, Binding), (
                    f"{owner.__name__}: write {binding!r} as a Binding"
                )
                for key in binding.key.split(","):
                    name = f"{owner.__name__}:{key.strip()}"
                    cases.append(pytest.param(owner.__name__, key.strip(), binding.action, id=name))
    return cases


Check = Callable[[Pilot, VaultBrowser, str], Awaitable[None]]
CHECKS: dict[tuple[str, str], Check] = {}


def checks(owner: str, action: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        CHECKS[(owner, action)] = check
        return check

    return register


async def open_session(pilot: Pilot, browser: VaultBrowser, name: str = "talk-10") -> SessionScreen:
    """Choose the session in the list and open it with Enter (`long-talk`: more messages than
    one window, slower to mount)."""
    table = browser.screen.query_one("#sessions", DataTable)
    table.move_cursor(row=[str(key.value) for key in table.rows].index(f"claude-code:{name}"))
    await pilot.press("enter")
    await pilot.pause()
    screen = browser.screen
    assert isinstance(screen, SessionScreen) and screen.loaded.label == f"claude-code:{name}"
    return screen


@checks("VaultBrowser", "quit")
@checks("BrowseScreen", "app.quit")
async def _quits(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    assert not browser.is_running and browser.return_code == 0


@checks("BrowseScreen", "focus('#filter')")
@checks("BrowseScreen", "focus('#search')")
async def _focuses_a_box(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    assert browser.focused is not None and browser.focused.id == "sessions"
    await pilot.press(key)
    wanted = "filter" if key in ("slash", "ctrl+f") else "search"
    assert isinstance(browser.focused, Input) and browser.focused.id == wanted
    assert browser.is_running


@checks("BrowseScreen", "focus('#sessions')")
async def _leaves_a_box_for_the_list(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    for box in ("slash", "s"):
        await pilot.press(box, "x")
        await pilot.press(key)
        assert browser.focused is not None and browser.focused.id == "sessions"
    await pilot.press(key)  # on the list itself: nothing to leave, and the browser stays
    assert browser.is_running and isinstance(browser.screen, BrowseScreen)


@checks("BrowseScreen", "restore")
@checks("BrowseScreen", "resume")
async def _asks_first_about_the_highlighted_session(
    pilot: Pilot, browser: VaultBrowser, key: str
) -> None:
    await _asks_first(pilot, browser, key, "claude-code:long-talk")  # the newest, at the top


@checks("SessionScreen", "restore")
@checks("SessionScreen", "resume")
async def _asks_first_about_the_open_session(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    await open_session(pilot, browser)
    await _asks_first(pilot, browser, key, "claude-code:talk-10")


async def _asks_first(pilot: Pilot, browser: VaultBrowser, key: str, label: str) -> None:
    await pilot.press(key)
    await pilot.pause()
    dialog = browser.screen
    assert isinstance(dialog, RestoreDialog if key == "R" else ResumeDialog)
    assert (dialog.label if isinstance(dialog, RestoreDialog) else dialog.target.label) == label


@checks("KeyTable", "cursor_down")
@checks("KeyTable", "cursor_up")
async def _moves_the_cursor(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    table = browser.screen.query_one("#sessions", DataTable)
    table.move_cursor(row=2)
    await pilot.press(key)
    assert table.cursor_row == (3 if key == "j" else 1)


@checks("SessionScreen", "app.pop_screen")
async def _goes_back_to_the_list(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    await open_session(pilot, browser)
    await pilot.press(key)
    assert isinstance(browser.screen, BrowseScreen) and browser.is_running


@checks("SessionScreen", "toggle_results")
async def _unfolds_every_result(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    screen = await open_session(pilot, browser)
    assert all(fold.collapsed for fold in screen.query(Collapsible))
    await pilot.press(key)
    assert not any(fold.collapsed for fold in screen.query(Collapsible))


@checks("SessionScreen", "open_find")
async def _opens_the_find_bar(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    screen = await open_session(pilot, browser)
    await pilot.press(key)
    assert screen.query_one("#findbar").has_class("open")
    assert browser.focused is not None and browser.focused.id == "find"


@checks("SessionScreen", "find_step(1)")
@checks("SessionScreen", "find_step(-1)")
async def _steps_through_the_matches(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    screen = await open_session(pilot, browser, "long-talk")
    await pilot.press("slash", *"about zebras", "enter", "escape")
    assert screen.found == 0 and len(screen.matches) == 44  # every prompt but the first
    await pilot.press(key)
    await pilot.pause()
    assert screen.found == (1 if key == "n" else 43)  # the previous of the first: the last
    widget = screen._widgets[screen.matches[screen.found]]
    assert widget.has_class("found")


@checks("SessionScreen", "scroll_messages(1)")
@checks("SessionScreen", "scroll_messages(-1)")
async def _scrolls_a_line(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    screen = await open_session(pilot, browser, "long-talk")
    scroller = screen.query_one("#messages", VerticalScroll)
    scroller.scroll_to(y=5, animate=False)
    await pilot.pause()
    await pilot.press(key)
    await pilot.pause()
    assert scroller.scroll_y == (6 if key == "j" else 4)


@checks("FindInput", "leave")
async def _closes_the_find_bar(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    screen = await open_session(pilot, browser)
    await pilot.press("slash", *"zebras", key)
    assert not screen.query_one("#findbar").has_class("open")
    assert browser.screen is screen and browser.focused is screen.query_one("#messages")


@checks("Confirmation", "cancel")
async def _cancels_and_writes_nothing(pilot: Pilot, browser: VaultBrowser, key: str) -> None:
    for opener in ("R", "U"):
        await pilot.press(opener)
        await pilot.pause()
        assert isinstance(browser.screen, RestoreDialog | ResumeDialog)
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(browser.screen, BrowseScreen) and browser.is_running


@pytest.mark.parametrize(("owner", "key", "action"), advertised_bindings())
async def test_every_advertised_binding_does_what_it_says(tui_vault, owner, key, action):
    check = CHECKS.get((owner, action))
    assert check is not None, (
        f"{owner} binds {key!r} to {action!r}, and no check says what it should do: add one"
    )
    vault, source = tui_vault
    before = sorted((path.name, path.stat().st_mtime_ns) for path in source.iterdir())
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:  # re-raises what the app stopped on
        await pilot.pause()
        await check(pilot, browser, key)
        await pilot.pause()
    assert browser.return_code in (None, 0)
    # No key writes a file without its confirmation.
    assert sorted((path.name, path.stat().st_mtime_ns) for path in source.iterdir()) == before


async def test_focus_starts_on_the_list_and_letters_type_into_the_boxes(tui_vault):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert browser.focused is browser.screen.query_one("#sessions")
        await pilot.press("slash", *"q/sjkRU")
        assert browser.screen.query_one("#filter", Input).value == "q/sjkRU"
        assert isinstance(browser.screen, BrowseScreen) and browser.is_running
        await pilot.press("escape", "ctrl+s", *"q/n")
        assert browser.screen.query_one("#search", Input).value == "q/n"
        await pilot.press("escape", "q")
    assert browser.return_code == 0
