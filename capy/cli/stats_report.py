"""`capy stats` without the cyclopts app: the body the command runs.

cyclopts and rich cost several bare Python starts; `capy.cli.quick` runs a plain `capy stats`
here directly, and the cyclopts command calls the same function.
"""

from __future__ import annotations

from pathlib import Path

from capy.cli.guard import guarded


def show_stats(session: str | None = None, *, db: Path | None = None, as_json: bool = False) -> int:
    """Print the savings report of a session (default: the latest); exit code of `capy stats`."""

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
