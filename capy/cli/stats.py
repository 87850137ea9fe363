"""`capy stats`: the savings report of the latest (or a named) server session."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from capy.cli.store import DbOption, JsonFlag


def stats(
    *,
    session: Annotated[str | None, Parameter(name="--session")] = None,
    db: DbOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Show what capy kept out of the agent's context, and what the knowledge base holds.

    The report is the one `capy_stats` gives inside a session: the MCP server saves it after
    every tool call.

    Parameters
    ----------
    session
        The session id to report (default: the most recently active one).
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print the report as JSON.
    """

    from capy.cli.stats_report import show_stats

    return show_stats(session, db=db, as_json=as_json)
