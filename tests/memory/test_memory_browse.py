"""The memory view, driven by textual's pilot over records learned from a real capsule log: the
table lists them, the pane shows the selected one with the capsules it came from, the filter
narrows, and outside a terminal the command says so in one line."""

from __future__ import annotations

import pytest
from memory_helpers import call, prompt, push_episode
from textual.widgets import DataTable, Input, Static

from capy.memory.manage import project_records, provenance_of
from capy.memory.tui import MemoryBrowser

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def learned(store):
    store.write(push_episode("s1", 1))
    store.write(
        [
            call("s2", "npm install zod", "added 1 package", "2026-05-02T10:00:00Z"),
            prompt("s2", "No, use pnpm here, npm breaks the lockfile.", "2026-05-02T10:00:01Z"),
        ]
    )
    records = project_records(store)
    return records, {record["id"]: provenance_of(store, record) for record in records}


def _pane(app: MemoryBrowser) -> str:
    return str(app.query_one("#record", Static).content)


async def test_the_view_lists_records_and_shows_one_with_its_provenance(learned):
    records, provenance = learned
    app = MemoryBrowser(records, provenance)
    async with app.run_test(size=(140, 40)) as pilot:
        table = app.query_one("#records", DataTable)
        assert {str(key.value) for key in table.rows} == {record["id"] for record in records}
        rule = next(record for record in records if record["type"] == "rule")
        table.move_cursor(row=[str(key.value) for key in table.rows].index(rule["id"]))
        await pilot.pause()
        pane = _pane(app)
        assert "git pull --rebase origin login-form" in pane
        assert "learned from 2 capsule(s)" in pane
        assert "- error " in pane and "- tool_call " in pane and "session s1" in pane

        await pilot.press("slash", *"pnpm")
        await pilot.pause()
        assert app.query_one("#filter", Input).value == "pnpm"
        [only] = [str(key.value) for key in table.rows]
        assert only == next(record["id"] for record in records if record["type"] == "preference")
        assert "- prompt " in _pane(app)

        await pilot.press("escape", "q")


def test_browse_outside_a_terminal_is_one_line(capsys):
    from capy.cli import main

    assert main(["memory", "browse"]) == 2
    assert "needs an interactive terminal" in capsys.readouterr().err
