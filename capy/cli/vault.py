"""`capy vault import | list | search | show | restore | stats | ...`: thin shells over
`capy.vault` (the upkeep commands live in `capy.cli.vault_upkeep`)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter

from capy.cli.output import progress_bar, say
from capy.cli.store import JsonFlag, guarded
from capy.vault.render import minute

app = App(name="vault", help="Archive past sessions verbatim; search and restore them.")

CANNOT_RUN = 2
SOME_FAILED = 1

PathOption = Annotated[
    Path | None,
    Parameter(name="--path", help="Vault file to use instead of the default (CAPY_VAULT_PATH)."),
]
TuiFlag = Annotated[bool, Parameter(name="--tui", negative=())]


@contextmanager
def _vault(path: Path | None):
    from capy.vault import open_vault

    with open_vault(path) as vault:
        yield vault


def _browse(path: Path | None, start: Any) -> int:
    """Run the vault browser (textual, imported only now) in this terminal."""
    import sys

    from capy.cli.output import error_line

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        error_line("--tui needs an interactive terminal; run it in one, or leave out --tui")
        return CANNOT_RUN
    from capy.vault.tui import run_tui

    with _vault(path) as vault:
        outcome = run_tui(vault, start)
    if outcome.resume is None:
        return outcome.code
    from capy.cli.vault_upkeep import finish_resume

    return finish_resume(outcome.resume, run_=True)  # the person confirmed it in the browser


@app.command(name="import")
def import_(
    *,
    source: Annotated[Path | None, Parameter(name="--source")] = None,
    dry_run: Annotated[bool, Parameter(name="--dry-run", negative=())] = False,
    project: Annotated[str | None, Parameter(name="--project")] = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Archive agent sessions (Claude Code, Codex) verbatim, and index their messages.

    Sessions already archived with the same files are skipped; a session that grew since it
    was archived replaces its smaller copy. Files are kept byte for byte (compressed and
    encrypted); secrets are redacted from the search index only.

    Parameters
    ----------
    source
        A folder of transcripts (*.jsonl, any depth, sidecars under <session>/subagents/)
        instead of the agents' own folders.
    dry_run
        Report what an import would do, and write nothing.
    project
        Only sessions whose working directory contains this text.
    as_json
        Print the report, with one entry per session, as JSON.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.cli.output import error_line
        from capy.vault import locate_vault
        from capy.vault.importer import ImportOptions, import_sessions

        if source is not None and not source.is_dir():
            error_line(f"--source {source} is not a folder; give the folder holding the *.jsonl")
            return CANNOT_RUN
        options = ImportOptions(source=source, dry_run=dry_run, project=project)
        if dry_run and not locate_vault(path).path.is_file():
            report = import_sessions(None, options)  # nothing archived yet: no vault to create
        else:
            with (
                _vault(path) as vault,
                progress_bar("archiving sessions", quiet=as_json) as progress,
            ):
                report = import_sessions(vault, options, progress=progress)
        _print_import(report, as_json)
        return SOME_FAILED if report.counts["failed"] else 0

    return guarded(run)


def _print_import(report: Any, as_json: bool) -> None:
    from capy.cli.outcomes import print_reasons
    from capy.cli.output import print_json
    from capy.units import human_bytes
    from capy.vault.importer import FAILED, KEPT, UNCHANGED

    if as_json:
        print_json(report.as_dict())
        return
    counts, totals = report.counts, report.totals
    verb = "would archive" if report.dry_run else "archived"
    written = counts["imported"] + counts["replaced"]
    replaced = f" ({counts['replaced']} replacing a smaller copy)" if counts["replaced"] else ""
    say(
        f"{verb} {written} of {totals['sessions']} sessions{replaced}: {totals['files']} files, "
        f"{human_bytes(totals['bytes'])}, {totals['messages']:,} messages indexed"
    )
    skipped = [name for name in (UNCHANGED, KEPT) if counts[name]]
    if skipped:
        say("skipped: " + ", ".join(f"{counts[name]} {name}" for name in skipped))
    if counts[FAILED]:
        say(f"failed: {counts[FAILED]}")
    print_reasons(report.sessions, skipped, failed=FAILED)
    if totals["malformed_lines"]:
        say(f"malformed lines archived but not indexed: {totals['malformed_lines']}")


@app.command(name="list")
def list_(
    *,
    project: Annotated[str | None, Parameter(name="--project")] = None,
    as_json: JsonFlag = False,
    tui: TuiFlag = False,
    path: PathOption = None,
) -> int:
    """List archived sessions, newest first.

    Parameters
    ----------
    project
        Only sessions whose working directory contains this text.
    as_json
        Print JSON: one object per session.
    tui
        Browse them in the terminal interface (secrets redacted): j/k and Enter to open one,
        / to filter the list, s to search messages, / inside a session to find words in it
        (n/N: next/previous), R to restore its files, U to resume it in its agent, q to quit.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from dataclasses import asdict

        from capy.cli.output import print_json
        from capy.vault.catalog import list_sessions

        if tui:
            from capy.vault.tui import TuiStart

            return _browse(path, TuiStart(project=project))
        with _vault(path) as vault:
            sessions = list_sessions(vault, project)
        if as_json:
            print_json({"sessions": [asdict(item) for item in sessions]})
            return 0
        if not sessions:
            say("no archived sessions; run `capy vault import` to archive them")
        for item in sessions:
            when = minute(item.started_at) or "?"
            say(f"{when}  {item.label}  {item.messages} messages  {item.project or '?'}")
            if item.title:
                say(f"    {item.title}")
        return 0

    return guarded(run)


@app.command
def search(
    *queries: str,
    role: Annotated[list[str] | None, Parameter(name="--role")] = None,
    project: Annotated[str | None, Parameter(name="--project")] = None,
    after: Annotated[str | None, Parameter(name="--after")] = None,
    before: Annotated[str | None, Parameter(name="--before")] = None,
    limit: Annotated[int | None, Parameter(name="--limit")] = None,
    as_json: JsonFlag = False,
    tui: TuiFlag = False,
    path: PathOption = None,
) -> int:
    """Search archived messages; each QUERY is searched on its own.

    Parameters
    ----------
    queries
        One or more queries (quote a query of several words).
    role
        Only messages of this role (user, assistant, tool, system); repeat for several.
    project
        Only sessions whose working directory contains this text.
    after
        Only messages written at or after this date or time (ISO-8601, UTC: 2026-01-31).
    before
        Only messages written before this date or time (ISO-8601, UTC).
    limit
        Hits per query (default: the search pack's).
    as_json
        Print JSON: per query, its hits with session, role, title, snippet, project and time.
    tui
        Show the hits in the terminal interface, named by their session's title; Enter opens
        one at that message (and R restores, U resumes it).
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.cli.output import error_line
        from capy.vault.corpus import VaultScope, hit_context, search_vault

        if tui:
            return _browse_search(queries, role, project, after, before, path)
        if not queries:
            error_line("give at least one QUERY to search for")
            return CANNOT_RUN
        if limit is not None and limit < 1:
            error_line(f"--limit must be at least 1, not {limit}")
            return CANNOT_RUN
        with _vault(path) as vault:
            try:
                scope = VaultScope(project=project, after=after, before=before)
                results = search_vault(vault, queries, limit=limit, roles=role, scope=scope)
            except ValueError as error:
                error_line(str(error))
                return CANNOT_RUN
            context = hit_context(vault, [hit.chunk_id for r in results for hit in r.hits])
        _print_search(results, context, as_json)
        return 0

    return guarded(run)


def _browse_search(
    queries: tuple[str, ...],
    roles: list[str] | None,
    project: str | None,
    after: str | None,
    before: str | None,
    path: Path | None,
) -> int:
    from capy.cli.output import error_line
    from capy.vault.corpus import VaultScope, search_vault
    from capy.vault.tui import TuiStart

    scope = VaultScope(project=project, after=after, before=before)
    with _vault(path) as vault:
        try:  # no query: only the filters are checked
            search_vault(vault, [], roles=roles, scope=scope)
        except ValueError as error:
            error_line(str(error))
            return CANNOT_RUN
    start = TuiStart(project=project, queries=queries, roles=roles, scope=scope)
    return _browse(path, start)


def _print_search(results: list, context: dict, as_json: bool) -> None:
    from capy.cli.output import print_json

    if as_json:
        print_json({"queries": [_search_json(result, context) for result in results]})
        return
    for number, result in enumerate(results):
        if number:
            say()
        header = f"{result.query!r}: {len(result.hits)} hit{'' if len(result.hits) == 1 else 's'}"
        if result.corrected_query:
            header += f" (searched as {result.corrected_query!r})"
        say(header)
        for rank, hit in enumerate(result.hits, start=1):
            when = context.get(hit.chunk_id, (None, ""))[1]
            title = f" › {hit.title}" if hit.title else ""
            say(f"{rank:>3}. {hit.source_label} [{hit.kind}] {minute(when)}{title}")
            for line in hit.snippet.splitlines():  # none for a body the pack leaves out
                say(f"     {line}")


def _search_json(result: Any, context: dict) -> dict:
    hits = []
    for hit in result.hits:
        project, when = context.get(hit.chunk_id, (None, ""))
        hits.append(
            {
                "session": hit.source_label,
                "role": hit.kind,
                "title": hit.title,
                "snippet": hit.snippet,
                "project": project,
                "timestamp": when,
                "layer": hit.layer,
                "score": hit.score,
            }
        )
    return {"query": result.query, "corrected_query": result.corrected_query, "hits": hits}


@app.command
def restore(
    session: str,
    *,
    output: Annotated[Path | None, Parameter(name="--output")] = None,
    path: PathOption = None,
) -> int:
    """Write an archived session's transcript and sidecars back, byte for byte.

    Parameters
    ----------
    session
        The session id (a unique prefix will do), or platform:id (claude-code:1a2b...).
    output
        Folder to restore into instead of where the session was imported from.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.units import human_bytes
        from capy.vault.restore import restore_session

        with _vault(path) as vault:
            restored = restore_session(vault, session, output)
        for item in restored:
            verb = "restored" if item.written else "already there"
            say(f"{verb}: {item.path} ({human_bytes(item.size)})")
        return 0

    return guarded(run)


@app.command
def show(
    session: str,
    *,
    fmt: Annotated[Literal["text", "markdown", "json"], Parameter(name="--format")] = "text",
    results: Annotated[bool, Parameter(name="--results", negative=())] = False,
    tui: TuiFlag = False,
    path: PathOption = None,
) -> int:
    """Print an archived session: its messages, tool calls and (folded) tool results.

    What is shown is read from the verbatim archived file with its secrets redacted (masked
    as [REDACTED:rule-id] where the secrets pack finds one); `capy vault restore` gives back
    the verbatim bytes. Each tool result is one line (tool, call, size, error) unless --results;
    an Edit/Write result's body is its unified diff.

    Parameters
    ----------
    session
        The session id (a unique prefix will do), or platform:id (claude-code:1a2b...).
    fmt
        text (default), markdown, or json.
    results
        Show tool results (and harness text) in full instead of one line each.
    tui
        Read it in the terminal interface, tool results folded and diffs coloured: / finds
        words in it (n/N: next/previous), r unfolds every result, R restores, U resumes.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.vault.render import load_session, render

        if tui:
            from capy.vault.tui import TuiStart

            return _browse(path, TuiStart(session=session))
        with _vault(path) as vault:
            loaded = load_session(vault, session)
        say(render(loaded, fmt, results=results), end="")
        return 0

    return guarded(run)


@app.command
def stats(*, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """Show the vault's size, sessions per project, compression and reindex backlog.

    Parameters
    ----------
    as_json
        Print the figures as JSON.
    path
        Vault file to use instead of the default (also CAPY_VAULT_PATH).
    """

    def run() -> int:
        from capy.cli.output import print_json
        from capy.rules import load_rules
        from capy.units import human_bytes
        from capy.vault.catalog import vault_stats

        with _vault(path) as vault:
            figures = vault_stats(vault, load_rules().index_version)
        if as_json:
            print_json(figures)
            return 0
        ratio = figures["compression_ratio"]
        say(f"vault: {figures['path']} ({human_bytes(figures['file_bytes'])})")
        say(f"sessions: {figures['sessions']}, messages indexed: {figures['messages']:,}")
        say(
            f"files: {figures['blobs']}, {human_bytes(figures['uncompressed_bytes'])} stored as "
            f"{human_bytes(figures['stored_bytes'])}" + (f" ({ratio}x)" if ratio else "")
        )
        say(f"reindex backlog: {figures['reindex_backlog']} sessions")
        for project, count in figures["per_project"].items():
            say(f"  {count:>5}  {project}")
        return 0

    return guarded(run)


# Upkeep commands live in their own module, imported only when one of them runs.
for _name, _help in (
    ("reindex", "Rebuild search rows built with older rules, from the archived files."),
    ("delete", "Delete an archived session."),
    ("checkpoint", "Copy the vault's write-ahead log into its file."),
    ("compact", "Recompress archived files at the best level, then VACUUM."),
    ("merge", "Add another vault's sessions to this one (non-destructive, idempotent)."),
    ("rekey", "Re-encrypt the vault under a new key, keeping a backup."),
    ("resume", "Restore a session and print or run its agent's resume command."),
):
    app.command(f"capy.cli.vault_upkeep:{_name}", name=_name, help=_help)
