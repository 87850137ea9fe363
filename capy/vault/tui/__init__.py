"""The vault browser: a textual app to list, filter, search, read, restore and resume archived
sessions.

    from capy.vault.tui import TuiStart, run_tui

    with open_vault() as vault:
        outcome = run_tui(vault, TuiStart(queries=("flaky test",)))
    # outcome.resume: the session the person chose to resume, its files already restored

textual is imported only here, when the browser runs: the CLI's other commands never pay for it.
- `capy.vault.tui.app`: the app and its browse screen (session list, filter, search hits).
- `capy.vault.tui.session_view`: one session's messages, tool results folded, diffs coloured.
- `capy.vault.tui.find`: the find bar of the session screen.
- `capy.vault.tui.dialogs`: the restore and resume confirmations.
- `capy.vault.tui.layout`: column widths that fit the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.vault import Vault
    from capy.vault.corpus import VaultScope
    from capy.vault.resume import ResumePlan


@dataclass(frozen=True)
class TuiStart:
    """Where the browser opens: the list, a search's hits, or one session."""

    project: str | None = None  # the list and the searches keep to this project
    queries: Sequence[str] = ()  # searched at start, hits shown
    roles: Sequence[str] | None = None  # the searches' role filter
    scope: VaultScope | None = None  # the searches' project and time window
    session: str | None = None  # opened at start (an id, prefix or <platform>:<id>)


@dataclass(frozen=True)
class TuiExit:
    """How the browser ended."""

    code: int  # 0, or 1 when it stopped on an error (textual has printed it)
    resume: ResumePlan | None = None  # chosen to resume: its files are restored, to run now


def run_tui(vault: Vault, start: TuiStart = TuiStart()) -> TuiExit:
    """Run the browser until the person quits or chooses a session to resume."""
    from capy.vault.tui.app import VaultBrowser

    browser = VaultBrowser(vault, start)
    plan = browser.run()
    return TuiExit(browser.return_code or 0, plan)


__all__ = ["TuiExit", "TuiStart", "run_tui"]
