"""The vault browser: a textual app to list, filter, search and read archived sessions.

    from capy.vault.tui import TuiStart, run_tui

    with open_vault() as vault:
        run_tui(vault, TuiStart(queries=("flaky test",)))

textual is imported only here, when the browser runs: the CLI's other commands never pay for it.
- `capy.vault.tui.app`: the app and its browse screen (session list, filter, search hits).
- `capy.vault.tui.session_view`: one session's messages, tool results folded, diffs coloured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.vault import Vault
    from capy.vault.corpus import VaultScope


@dataclass(frozen=True)
class TuiStart:
    """Where the browser opens: the list, a search's hits, or one session."""

    project: str | None = None  # the list and the searches keep to this project
    queries: Sequence[str] = ()  # searched at start, hits shown
    roles: Sequence[str] | None = None  # the searches' role filter
    scope: VaultScope | None = None  # the searches' project and time window
    session: str | None = None  # opened at start (an id, prefix or <platform>:<id>)


def run_tui(vault: Vault, start: TuiStart = TuiStart()) -> int:
    """Run the browser until the person quits; the exit code is 0."""
    from capy.vault.tui.app import VaultBrowser

    VaultBrowser(vault, start).run()
    return 0


__all__ = ["TuiStart", "run_tui"]
