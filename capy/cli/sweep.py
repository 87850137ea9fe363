"""`capy sweep`: index past agent sessions (Claude Code, Codex) into the knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import progress_bar, say
from capy.cli.store import JsonFlag, guarded

CANNOT_RUN = 2
SOME_FAILED = 1

OneDbOption = Annotated[
    Path | None,
    Parameter(
        name="--db",
        help="One database for every session, instead of each session's project's (CAPY_DB_PATH "
        "still applies per project).",
    ),
]


def sweep(
    *,
    dry_run: Annotated[bool, Parameter(name="--dry-run", negative=())] = False,
    force: Annotated[bool, Parameter(name="--force", negative=())] = False,
    source: Annotated[Path | None, Parameter(name="--source")] = None,
    as_json: JsonFlag = False,
    db: OneDbOption = None,
) -> int:
    """Index past agent sessions as Human/Assistant transcripts, for search.

    Each session goes into the knowledge base of the project it ran in, as a `session` source
    (label session:<platform>:<session-id>) that expires after the retention pack's TTL.
    Sessions too small to be worth finding again, still live, or unchanged since the last
    sweep are skipped; secrets are redacted before anything is stored.

    Parameters
    ----------
    dry_run
        Report what a sweep would index, and write nothing.
    force
        Sweep sessions again even when unchanged since the last sweep.
    source
        A folder of transcripts (*.jsonl, any depth) instead of the agents' own folders.
    as_json
        Print the report, with one entry per session, as JSON.
    db
        One database for every session, instead of each session's project (also for --source
        folders from another machine, whose project directories do not exist here).
    """

    def run() -> int:
        from capy.cli.output import error_line
        from capy.sessions.sweep import SweepOptions
        from capy.sessions.sweep import sweep as run_sweep

        if source is not None and not source.is_dir():
            error_line(f"--source {source} is not a folder; give the folder holding the *.jsonl")
            return CANNOT_RUN
        options = SweepOptions(dry_run=dry_run, force=force, source=source, db_path=db)
        with progress_bar("sweeping sessions", quiet=as_json) as progress:
            report = run_sweep(options, progress=progress)
        _print(report, as_json)
        return SOME_FAILED if report.counts["failed"] else 0

    return guarded(run)


def _print(report, as_json: bool) -> None:
    from capy.cli.outcomes import print_reasons
    from capy.cli.output import print_json
    from capy.sessions.sweep import FAILED, INDEXED

    if as_json:
        print_json(report.as_dict())
        return
    counts, totals = report.counts, report.totals
    verb = "would index" if report.dry_run else "indexed"
    say(
        f"{verb} {counts['indexed']} of {totals['sessions']} sessions: "
        f"{totals['messages']:,} messages, {totals['tool_calls']:,} tool calls, "
        f"{totals['chunks']:,} chunks into {totals['databases']} knowledge base(s)"
    )
    skipped = [name for name in counts if name not in (INDEXED, FAILED) and counts[name]]
    if skipped:
        say("skipped: " + ", ".join(f"{counts[name]} {name}" for name in skipped))
    if counts[FAILED]:
        say(f"failed: {counts[FAILED]}")
    print_reasons(report.sessions, skipped, failed=FAILED)
    if totals["malformed_lines"]:
        say(f"malformed lines skipped: {totals['malformed_lines']}")
    if totals["redactions"]:
        say(f"secrets redacted: {totals['redactions']}")
