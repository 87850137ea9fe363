"""What the browser does for a person, driven by keys over a real vault: hits named by their
session's title, a find inside an open session, and restore and resume behind a
confirmation that says what they did."""

from __future__ import annotations

import pytest
from textual.notifications import Notify
from textual.widgets import DataTable, Input, Static

from capy.vault.resume import ResumePlan
from capy.vault.tui import TuiStart
from capy.vault.tui.app import BrowseScreen, VaultBrowser
from capy.vault.tui.dialogs import RestoreDialog, ResumeDialog
from capy.vault.tui.find import FOUND_STYLE
from capy.vault.tui.session_view import WINDOW, FoldView, SessionScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notices_into(notices: list):
    def record(message) -> None:
        if isinstance(message, Notify):
            notices.append(message.notification.message)

    return record


async def test_hits_name_their_session_by_its_title(tui_vault):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.press("s", *"number 1 about zebras", "enter")
        hits = browser.screen.query_one("#hits", DataTable)
        assert hits.row_count > 0 and browser.focused is hits  # Enter took the reader there
        named = {str(hits.get_row(key)[0]) for key in hits.rows}
        assert "the long talk" in named
        assert not any(name.startswith("claude-code:") for name in named)


async def test_find_jumps_between_the_messages_that_hold_the_words(tui_vault):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart(session="long-talk"))
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = browser.screen
        assert isinstance(screen, SessionScreen) and len(screen.items) > WINDOW
        count = screen.query_one("#found-count", Static)
        # The last prompt sits beyond the first window: finding it mounts its window.
        await pilot.press("slash", *"Prompt   NUMBER 44")  # any case, any spacing
        assert str(count.content) == "1 message match"
        await pilot.press("enter")
        await pilot.pause()
        last = screen.matches[0]
        assert last >= WINDOW and screen.start <= last < screen.end
        widget = screen._widgets[last]
        assert widget.has_class("found") and str(count.content) == "1 of 1"
        shown = widget.content
        assert [
            shown.plain[span.start : span.end] for span in shown.spans if span.style == FOUND_STYLE
        ] == ["prompt number 44"]
        # A folded tool result's body is searched too: the jump unfolds it.
        find = screen.query_one("#find", Input)
        find.value = ""
        await pilot.press(*"quokka file", "enter")
        await pilot.pause()
        fold = screen._widgets[screen.matches[screen.found]]
        assert isinstance(fold, FoldView) and not fold.collapsed and fold.has_class("found")
        assert not widget.has_class("found")  # the earlier match is shown as it was
        await pilot.press(*" that is nowhere")
        assert str(count.content) == "no message matches"
        # Esc closes the find, not the session; a second one goes back to the list.
        await pilot.press("escape")
        assert browser.screen is screen and not screen.query_one("#findbar").has_class("open")
        await pilot.press("escape")
        assert isinstance(browser.screen, BrowseScreen)


async def test_restore_from_the_browser_writes_the_files_where_asked_and_says_so(
    tui_vault, tmp_path, sha256
):
    vault, source = tui_vault
    notices: list[str] = []
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE, message_hook=notices_into(notices)) as pilot:
        await pilot.pause()
        await pilot.press("R")  # the list's first row: the newest session
        dialog = browser.screen
        assert isinstance(dialog, RestoreDialog)
        folder = dialog.query_one("#folder", Input)
        assert folder.value == str(source)  # where it was imported from, to change at will
        folder.value = str(tmp_path / "restored")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(browser.screen, BrowseScreen)
    restored = tmp_path / "restored" / "long-talk.jsonl"
    assert sha256(restored) == sha256(source / "long-talk.jsonl")
    assert notices == [
        f"restored 1 of 1 files of claude-code:long-talk into {tmp_path / 'restored'}"
    ]


async def test_restore_never_writes_over_other_bytes_and_the_dialog_says_why(tui_vault):
    vault, source = tui_vault
    theirs = source / "long-talk.jsonl"
    theirs.write_text("someone's newer copy\n")
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R", "enter")
        await pilot.pause()
        dialog = browser.screen
        assert isinstance(dialog, RestoreDialog)  # it stays, to choose another folder
        assert str(dialog.query_one("#problem", Static).content) == (
            f"{theirs} is already there with other bytes; nothing was written: "
            "choose another folder"
        )
    assert theirs.read_text() == "someone's newer copy\n"


async def test_resume_from_a_session_restores_it_and_closes_with_the_command(tui_vault):
    vault, source = tui_vault
    (source / "talk-03.jsonl").unlink()
    browser = VaultBrowser(vault, TuiStart(session="talk-03"))
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("U")
        dialog = browser.screen
        assert isinstance(dialog, ResumeDialog)
        said = " ".join(str(widget.content) for widget in dialog.query(Static))
        assert f"Restores its files into {source}" in said
        assert "runs `claude --resume talk-03`" in said
        await pilot.press("enter")
        await pilot.pause()
    plan = browser.return_value
    assert isinstance(plan, ResumePlan) and plan.command == "claude --resume talk-03"
    assert [item.path for item in plan.restored] == [source / "talk-03.jsonl"]
    assert (source / "talk-03.jsonl").is_file()


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("", "give the folder to restore into"),
        ("   ", "give the folder to restore into"),
        (
            "{file}/inside",
            "cannot write {file}/inside: Not a directory; nothing was written: "
            "choose another folder",
        ),
    ],
    ids=["empty", "blank", "under-a-file"],
)
async def test_a_folder_that_cannot_take_the_files_is_one_sentence_in_the_dialog(
    tui_vault, tmp_path, typed, said
):
    vault, _ = tui_vault
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        dialog = browser.screen
        assert isinstance(dialog, RestoreDialog)
        dialog.query_one("#folder", Input).value = typed.format(file=a_file)
        await pilot.press("enter")
        await pilot.pause()
        assert browser.screen is dialog and browser.is_running  # it stays, to try again
        assert str(dialog.query_one("#problem", Static).content) == said.format(file=a_file)
    assert a_file.read_text() == "not a folder\n"


HOSTILE_QUERIES = ['"unbalanced', "NEAR(", "a AND OR", "*", "[(", "\\", "col:umn", "😀", "\x1b[2J"]


@pytest.mark.parametrize("words", HOSTILE_QUERIES)
def test_a_find_reads_its_words_literally(words):
    from capy.vault.tui.find import find_pattern

    pattern = find_pattern(words)
    assert pattern is not None
    assert pattern.search(f"before {words} after")
    assert not pattern.search("before after")


async def test_hostile_searches_and_finds_keep_the_browser_running(tui_vault):
    vault, _ = tui_vault
    browser = VaultBrowser(vault, TuiStart())
    async with browser.run_test(size=SIZE) as pilot:
        await pilot.pause()
        search = browser.screen.query_one("#search", Input)
        for words in HOSTILE_QUERIES:
            search.value = words
            search.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert browser.is_running and isinstance(browser.screen, BrowseScreen)
        browser.open_session("talk-10")
        await pilot.pause()
        for words in HOSTILE_QUERIES:
            await pilot.press("slash")
            browser.screen.query_one("#find", Input).value = words
            await pilot.press("enter", "n", "N", "escape")
            assert browser.is_running and isinstance(browser.screen, SessionScreen)
