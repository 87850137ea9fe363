"""`capy stats`: the savings report of the latest (or a named) server session."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from capy.cli.store import DbOption, JsonFlag, guarded


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

    def run() -> int:
        from capy.api.savings import render_stats, stats_report
        from capy.api.stats import load_session_stats
        from capy.cli.output import error_line, print_json
        from capy.cli.replies import workspace_for
        from capy.cli.tables import print_markdown

        workspace = workspace_for(db)
        recorded = load_session_stats(workspace, session)
        if session is not None and recorded is None:
            error_line(f"no session {session!r} recorded for this project; omit --session")
            return 2
        report = stats_report(workspace, recorded)
        if as_json:
            print_json(report)
        else:
            print_markdown(render_stats(report))
        return 0

    return guarded(run)
