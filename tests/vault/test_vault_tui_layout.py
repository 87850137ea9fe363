"""The browser's layout at the terminal sizes people use, over a vault with titles longer than
a row: no column pushed off screen, long cells cut with an ellipsis, a hit's text given the
room, every advertised key in the footer. What the screen shows is kept as a text snapshot,
and each case writes its SVG screenshot next to the test's files for a person to look at."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from textual.widgets import DataTable

from capy.vault.tui import TuiStart
from capy.vault.tui.app import VaultBrowser
from capy.vault.tui.session_view import SessionScreen

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (90, 30), (120, 40), (200, 60)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def screen_lines(browser: VaultBrowser) -> list[str]:
    """The screen as plain text, rendered as `App.export_screenshot` renders its SVG."""
    width, height = browser.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(
        browser.screen._compositor.render_update(
            full=True, screen_stack=browser._background_screens
        )
    )
    return console.export_text().splitlines()


def assert_columns_fit(table: DataTable) -> None:
    used = sum(column.get_render_width(table) for column in table.columns.values())
    assert used <= table.scrollable_content_region.width
    assert table.max_scroll_x == 0  # nothing to scroll sideways to


def assert_footer_shows(lines: list[str], *descriptions: str) -> None:
    footer = lines[-1]
    assert all(description in footer for description in descriptions), footer
    assert "palette" in footer  # the footer's last item: nothing was squeezed out


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_the_list_and_its_hits_fit_the_terminal(tui_vault, size, tmp_path, snapshot):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart(queries=("zebras",)))
    async with browser.run_test(size=size) as pilot:
        await pilot.pause()
        sessions = browser.screen.query_one("#sessions", DataTable)
        hits = browser.screen.query_one("#hits", DataTable)
        for table in (sessions, hits):
            assert_columns_fit(table)
        assert [str(column.label) for column in sessions.columns.values()] == [
            "started",
            "title",
            "project",
            "msgs",
        ]
        hit_column = hits.columns[next(key for key in hits.columns if key.value == "hit")]
        assert hit_column.width >= size[0] // 2  # the words one reads get the room
        lines = screen_lines(browser)
        assert any("…" in line and "refactor the authentication" in line for line in lines)
        assert any(line.rstrip().endswith("msgs") for line in lines)  # the last column shows
        assert_footer_shows(lines, "Quit", "Filter", "Search", "Restore", "Resume")
        browser.save_screenshot(f"list-{size[0]}x{size[1]}.svg", path=str(tmp_path))
        assert "\n".join(lines) == snapshot


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_a_session_fits_the_terminal(tui_vault, size, tmp_path, snapshot):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart(session="talk-11"))
    async with browser.run_test(size=size) as pilot:
        await pilot.pause()
        screen = browser.screen
        assert isinstance(screen, SessionScreen)
        assert screen.query_one("#messages").max_scroll_x == 0
        lines = screen_lines(browser)
        assert_footer_shows(lines, "Back", "Folds", "Find", "Next", "Restore", "Resume")
        await pilot.press("slash", *"zebras")
        lines = screen_lines(browser)
        assert any("zebras" in line for line in lines[-4:])  # the find bar, above the footer
        browser.save_screenshot(f"session-{size[0]}x{size[1]}.svg", path=str(tmp_path))
        assert "\n".join(lines) == snapshot


async def test_a_resize_lays_the_columns_out_again(tui_vault):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        table = browser.screen.query_one("#sessions", DataTable)
        table.move_cursor(row=3)
        wide = [column.width for column in table.columns.values()]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert [column.width for column in table.columns.values()] != wide
        assert_columns_fit(table)
        assert table.cursor_row == 3  # the reader's row survives the new layout


HOSTILE_TITLES = {
    "markup": "[bold red]not markup[/] [link=http://x]click[/link] $accent",
    "escapes": "\x1b]0;window title\x07\x1b[2J\x1b[31mred\x1b[0m and a bell \x07 here",
    "wide": "日本語のタイトルがとても長い場合でも表は崩れないこと、絵文字🦫🦫🦫も含めて確認する",
    "controls": "tab\tand\rcarriage\x00nul\x08backspace\x7fdel",
}


def assert_no_controls(lines: list[str]) -> None:
    """Nothing a terminal would read as a command: no C0 control but the layout's, no DEL,
    no C1."""
    text = "\n".join(lines)
    assert not [char for char in text if ord(char) < 32 and char != "\n"]
    assert not [char for char in text if 0x7F <= ord(char) < 0xA0]


async def test_hostile_titles_stay_text_inside_their_column(
    open_test_vault, tmp_path, session_writer
):
    from capy.vault.importer import ImportOptions, import_sessions

    for day, (name, title) in enumerate(HOSTILE_TITLES.items(), start=1):
        session_writer(tmp_path / "s", name, turns=1, first_prompt=title, day=day)
    with open_test_vault() as vault:
        import_sessions(vault, ImportOptions(source=tmp_path / "s"))
        browser = VaultBrowser(vault, TuiStart())
        async with browser.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            table = browser.screen.query_one("#sessions", DataTable)
            assert table.row_count == len(HOSTILE_TITLES)
            assert_columns_fit(table)
            lines = screen_lines(browser)
            assert_no_controls(lines)
            assert any("[bold red]not markup[/]" in line for line in lines)  # not markup
            assert any("␛]0;window title" in line for line in lines)  # shown, not obeyed
            rows = lines[5 : 5 + len(HOSTILE_TITLES)]
            assert all(line.rstrip().endswith("3") for line in rows)  # msgs stays in view
            for _ in HOSTILE_TITLES:  # each opens, and comes back, without an error
                await pilot.press("enter")
                await pilot.pause()
                assert isinstance(browser.screen, SessionScreen)
                assert_no_controls(screen_lines(browser))
                await pilot.press("r")  # the unfolded results too
                await pilot.pause()
                assert_no_controls(screen_lines(browser))
                await pilot.press("escape", "j")
