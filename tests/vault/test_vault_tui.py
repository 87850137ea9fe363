"""The vault browser, driven by textual's pilot over a real vault: two real Claude Code
transcripts from the shared test data and one synthetic session holding a (fake) token."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from rich.text import Text
from textual.notifications import Notify
from textual.widgets import Button, Collapsible, DataTable, Static
from textual.widgets._collapsible import CollapsibleTitle

from capy.vault.tui import TuiStart
from capy.vault.tui.app import VaultBrowser
from capy.vault.tui.session_view import FoldView, SessionScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(open_test_vault, claude_transcripts, tmp_path, session_writer):
    """short.jsonl (two failed calls), subagent.jsonl (a Write with its patch) and a synthetic
    session about zebras in another project."""
    from capy.vault.importer import ImportOptions, import_sessions

    source = tmp_path / "sessions"
    source.mkdir()
    for name in ("short.jsonl", "subagent.jsonl"):
        shutil.copy(claude_transcripts / "spotter" / name, source / name)
    session_writer(source, "zebra-notes", turns=2)
    with open_test_vault() as opened:
        report = import_sessions(opened, ImportOptions(source=source))
        assert report.counts["imported"] == 3
        yield opened


def session_rows(app: VaultBrowser) -> list[str]:
    table = app.screen.query_one("#sessions", DataTable)
    return [str(key.value) for key in table.rows]


def shown_text(screen: SessionScreen) -> str:
    """Every Static's text on the screen, folded bodies included."""
    return "\n".join(str(widget.content) for widget in screen.query(Static))


async def test_list_shows_every_session_and_the_filter_narrows_it(vault):
    app = VaultBrowser(vault, TuiStart())
    async with app.run_test(size=SIZE) as pilot:
        assert sorted(session_rows(app)) == [
            "claude-code:short",
            "claude-code:subagent",
            "claude-code:zebra-notes",
        ]
        table = app.screen.query_one("#sessions", DataTable)
        titles = {str(table.get_row(key)[1]) for key in table.rows}
        assert "mix phx.server doesnt seem to start" in titles
        await pilot.click("#filter")
        await pilot.press(*"zebras")
        assert session_rows(app) == ["claude-code:zebra-notes"]
        await pilot.press(*" nothing-like-it")
        assert session_rows(app) == []
        assert app.screen.sub_title == "0 of 3 sessions"


async def test_project_start_keeps_to_that_project(vault):
    app = VaultBrowser(vault, TuiStart(project="spotter"))
    async with app.run_test(size=SIZE):
        assert sorted(session_rows(app)) == ["claude-code:short", "claude-code:subagent"]


async def test_search_finds_a_phrase_and_opens_the_session_at_that_message(vault):
    app = VaultBrowser(vault, TuiStart())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#search")
        await pilot.press(*"dialyxir", "enter")
        hits = app.screen.query_one("#hits", DataTable)
        assert hits.row_count > 0
        hits.focus()
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.loaded.label == "claude-code:subagent"
        target = screen.target
        assert target is not None
        # What its search row holds: the text, the calls it makes or the result's call.
        found_in = [target.text, *(call.summary for call in target.tool_calls)]
        if target.result:
            found_in += [target.result.text, target.result.summary]
        assert "dialyxir" in " ".join(found_in).lower()
        assert screen.widget_for(target).has_class("target")
        await pilot.press("escape")
        assert not isinstance(app.screen, SessionScreen)


async def test_a_tool_result_expands_and_a_write_diff_is_coloured(vault):
    app = VaultBrowser(vault, TuiStart(session="subagent"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        write = next(fold for fold in screen.query(Collapsible) if fold.has_class("diff"))
        assert write.collapsed and "Write /home/marco/projects/spotter/plan.md" in str(write.title)
        write.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        assert not write.collapsed
        body = write.query_one(".body", Static).content
        assert isinstance(body, Text)
        added = [
            line
            for line in body.split()
            if line.plain.startswith("+") and not line.plain.startswith("+++")
        ]
        assert len(added) == 103  # the plan.md the Write created
        styles = {str(span.style) for line in added for span in line.spans}
        styles |= {str(line.style) for line in added}
        assert "green" in styles
        scroller = screen.query_one("#messages")
        scroller.scroll_to_widget(write, animate=False, top=True)
        await pilot.pause()
        await pilot.press("r")  # unfold every result; the reader stays at the same message
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert not any(fold.collapsed for fold in screen.query(Collapsible))
        assert scroller.scroll_y < scroller.max_scroll_y
        assert 0 <= write.virtual_region.y - scroller.scroll_y < 3


async def test_unfolding_every_result_keeps_the_message_on_screen_at_the_top(vault):
    """A scroll that starts during a scroll animation can stop between two rows (scroll_y
    has a fraction); the top row on screen is the rounded one, and that message stays there,
    not the one above with a fraction of a row in view."""
    app = VaultBrowser(vault, TuiStart(session="subagent"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        write = next(fold for fold in screen.query(FoldView) if fold.has_class("diff"))
        scroller = screen.query_one("#messages")
        top = write.virtual_region_with_margin.y
        scroller.scroll_to(y=top - 0.4, animate=False, immediate=True)
        await pilot.pause()
        assert scroller.scroll_offset.y == top  # the row the reader sees at the top
        await pilot.press("r")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert not any(fold.collapsed for fold in screen.query(FoldView))
        assert write.virtual_region_with_margin.y == scroller.scroll_y  # at the top, a whole row


async def test_a_long_session_is_shown_a_window_at_a_time(vault, tmp_path, session_writer):
    from capy.vault.importer import ImportOptions, import_sessions
    from capy.vault.tui.session_view import WINDOW

    turns = WINDOW // 3 + 10  # three messages a turn: more than one window
    session_writer(tmp_path / "long", "long-talk", turns=turns)
    import_sessions(vault, ImportOptions(source=tmp_path / "long"))
    app = VaultBrowser(vault, TuiStart(session="long-talk"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        later, earlier = screen.query_one("#later", Button), screen.query_one("#earlier", Button)
        assert later.display and not earlier.display
        assert len(screen.query(".message")) + len(screen.query(FoldView)) == WINDOW
        later.press()
        await pilot.pause()
        assert not later.display
        assert len(screen.query(".message")) + len(screen.query(FoldView)) == 3 * turns
        last = screen.items[-1]
        assert screen.widget_for(last) is not None
        await pilot.press("escape")
        # Opened at its last message (a search row's ordinal), the window ends there.
        opened = app.open_session("long-talk", len(screen.loaded.indexed) - 1)
        await pilot.pause()
        assert opened is not None and opened.target is opened.items[-1]
        assert opened.query_one("#earlier", Button).display
        assert opened.widget_for(opened.target).has_class("target")
        assert opened.widget_for(opened.items[0]) is None


async def test_failed_results_are_marked_and_secrets_never_shown(vault, fake_token):
    app = VaultBrowser(vault, TuiStart(session="short"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        folds = list(app.screen.query(Collapsible))
        assert len(folds) == 2 and all(fold.has_class("error") for fold in folds)
    app = VaultBrowser(vault, TuiStart(session="zebra-notes"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = shown_text(app.screen)
        assert "reply number 1 with [REDACTED:" in text
        assert fake_token not in text


async def test_an_unknown_session_is_a_notice_not_a_crash(vault):
    notices = []

    def record(message) -> None:
        if isinstance(message, Notify):
            notices.append(message.notification)

    app = VaultBrowser(vault, TuiStart(session="no-such-session"))
    async with app.run_test(size=SIZE, message_hook=record) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, SessionScreen)
    assert [(notice.severity, notice.message) for notice in notices] == [
        (
            "error",
            "no archived session matches 'no-such-session'; `capy vault list` shows their ids",
        )
    ]


def test_tui_needs_a_terminal(vault_path, capsys):
    from capy.cli import vault as cli

    assert cli.list_(tui=True, path=vault_path) == 2
    assert cli.show("x", tui=True, path=vault_path) == 2
    assert cli.search("x", tui=True, path=vault_path) == 2
    assert (
        capsys.readouterr().err.splitlines()
        == ["capy: --tui needs an interactive terminal; run it in one, or leave out --tui"] * 3
    )


def test_search_tui_checks_its_filters_first(vault_path, capsys):
    from capy.cli import vault as cli

    assert cli.search("x", tui=True, role=["robot"], path=vault_path) == 2
    assert "unknown role 'robot'" in capsys.readouterr().err


def test_the_cli_imports_textual_only_for_the_browser():
    code = "import sys, capy.cli.vault; print('textual' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
