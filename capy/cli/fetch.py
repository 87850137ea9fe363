"""`capy fetch`: the CLI twin of `capy_fetch_and_index`; prints the same markdown the agent gets."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import progress_bar
from capy.cli.store import DbOption, JsonFlag, guarded

# Exit codes: 0 every URL answered, 1 some URL failed (the others were still indexed), 2 the
# command itself could not run (bad arguments, settings or database).
SOME_FAILED = 1
CANNOT_RUN = 2


def fetch(
    *urls: str,
    source: Annotated[str | None, Parameter(name="--source")] = None,
    kind: Annotated[str, Parameter(name="--kind")] = "durable",
    force: Annotated[bool, Parameter(name="--force", negative=())] = False,
    as_json: JsonFlag = False,
    db: DbOption = None,
) -> int:
    """Fetch URLs through capy's SSRF guard, convert them to text and index them for search.

    HTML becomes markdown (scripts, styles, navigation and page chrome dropped), JSON stays
    JSON, other text is kept as it is. A URL fetched recently is answered from the knowledge
    base; GitHub and GitLab issue and pull-request URLs are answered with the gh/glab command
    to read them with instead.

    Parameters
    ----------
    urls
        The http:// or https:// URLs to fetch.
    source
        Label to store them under (default: each URL); several URLs become "LABEL URL".
    kind
        durable (kept, searched by default) or ephemeral (expires, searched when asked for).
    force
        Fetch again even when the cache holds a fresh copy.
    as_json
        Print the reply and every URL's outcome as JSON.
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    """

    def run() -> int:
        from capy.api import ToolInputError
        from capy.api.fetch import fetch_report
        from capy.cli.output import error_line
        from capy.cli.replies import workspace_for
        from capy.cli.tables import print_markdown

        workspace = workspace_for(db)
        try:
            with progress_bar("fetching", quiet=as_json or len(urls) < 2) as progress:
                report = fetch_report(
                    workspace, list(urls), source=source, force=force, kind=kind, progress=progress
                )
        except ToolInputError as error:
            error_line(str(error))
            return CANNOT_RUN
        if as_json:
            _print_json(report)
        else:
            print_markdown(report.reply.text)
        failed = any(not outcome.status.succeeded for outcome in report.outcomes)
        return SOME_FAILED if failed else 0

    return guarded(run)


def _print_json(report) -> None:
    from dataclasses import asdict

    from capy.cli.output import print_json

    reply = report.reply
    print_json(
        {
            "text": reply.text,
            "is_error": reply.is_error,
            "processed_bytes": reply.processed_bytes,
            "returned_bytes": reply.returned_bytes,
            "cache_hits": reply.cache_hits,
            "urls": [asdict(outcome) for outcome in report.outcomes],
        }
    )
