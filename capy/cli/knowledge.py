"""`capy index | search | reindex | cleanup`: thin shells over the knowledge-base library."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

from cyclopts import Parameter

from capy.cli.knowledge_search import open_knowledge as _open
from capy.cli.knowledge_search import plural as _plural
from capy.cli.output import error_line, progress_bar, say
from capy.cli.store import DbOption, JsonFlag, guarded, human_bytes

if TYPE_CHECKING:
    from capy.rules.views.retention import Size
    from capy.store.intake import Intake

STDIN = "-"


def index(
    # allow_leading_hyphen: `-` (standard input) would otherwise be read as an unknown option.
    path: Annotated[str | None, Parameter(allow_leading_hyphen=True)] = None,
    /,
    *,
    source: Annotated[str | None, Parameter(name="--source")] = None,
    kind: Annotated[str, Parameter(name="--kind")] = "durable",
    content_type: Annotated[str, Parameter(name="--content-type")] = "auto",
    split: Annotated[bool, Parameter(name="--split", negative=())] = False,
    db: DbOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Index a file, a folder, or standard input into the knowledge base.

    A folder indexes every regular file under it (hidden entries and links left out), each as
    its own source labelled by its path, in batches of one transaction each; a file that fails
    is named and the others are still indexed (exit 1 when any failed). Secrets are redacted
    before anything is stored; indexing the same content under the same label again only
    marks it as used. An input over the retention pack's per-source cap
    (size.max_source_bytes) keeps its start and end and says what was dropped, unless --split.

    Parameters
    ----------
    path
        File or folder to index, or - (the default) to read standard input.
    source
        Label to store it under (default: the path as given; required for standard input; for
        a folder, the prefix of every file's label).
    kind
        durable (kept), ephemeral (expires, not searched by default) or session (expires).
    content_type
        auto, markdown, json, plaintext, log, code, csv, html or diff.
    split
        Keep all of an input over the per-source cap, as several sources labelled
        "LABEL (part N)".
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print the result as JSON.
    """

    def run() -> int:
        from capy.api.hints import PERSON_HINTS
        from capy.store.content import ContentError
        from capy.store.indexing import index_content
        from capy.store.intake import kept_note

        label = _label(path, source)
        if path not in (None, STDIN) and os.path.isdir(path):
            if split:
                raise ContentError("--split cuts one large input; give a file, not a folder")
            return _index_folder(path, label, kind, content_type, db, as_json)
        with _open(db) as (store, rules):
            size = rules.view("retention").size

            def store_one(content: str | bytes, name: str):
                return index_content(
                    store, content, label=name, kind=kind, content_type=content_type, rules=rules
                )

            if split:
                results, notes = _index_parts(path, label, size, store_one), []
            else:
                intake = _read_input(path, label, size)
                results = [store_one(intake.content, label)]
                note = kept_note(results[0], intake, size, keep_all=PERSON_HINTS.split_again())
                notes = [note] if note else []
        if as_json:
            from capy.cli.output import print_json

            rows = [asdict(result) for result in results]
            print_json({**rows[0], "notes": notes} if not split else {"parts": rows})
        else:
            for result in results:
                _print_indexed(result)
            for note in notes:
                say(note)
        return 0

    return guarded(run)


def _index_folder(
    path: str, label: str, kind: str, content_type: str, db: Any, as_json: bool
) -> int:
    from pathlib import Path

    from capy.api.hints import PERSON_HINTS
    from capy.store.batch import BatchFailure, index_batch
    from capy.store.content import ContentError
    from capy.store.intake import kept_note
    from capy.store.intake_many import FileIntakes, expand

    with _open(db) as (store, rules):
        size = rules.view("retention").size
        intakes = FileIntakes(size, kind, content_type)
        items = intakes.items(list(expand(Path(path), label, store.path)))
        if not items:
            raise ContentError(f"nothing to index in {path}: it holds no regular files")
        with progress_bar("indexing") as advance:
            step = (lambda _label, done, total: advance(done, total)) if advance else None
            outcomes = index_batch(store, items, rules=rules, progress=step, total=len(items))
    done = [outcome for outcome in outcomes if not isinstance(outcome, BatchFailure)]
    failed = [outcome for outcome in outcomes if isinstance(outcome, BatchFailure)]
    notes = []
    for item, outcome in zip(items, outcomes, strict=True):
        intake = intakes.intakes.get(item.label)
        if intake is not None and not isinstance(outcome, BatchFailure):
            note = kept_note(outcome, intake, size, keep_all=PERSON_HINTS.split_again())
            notes.extend([f"{outcome.label}: {note}"] if note else [])
    if as_json:
        from capy.cli.output import print_json

        print_json(
            {
                "sources": [asdict(result) for result in done],
                "failed": [asdict(failure) for failure in failed],
                "notes": notes,
            }
        )
    else:
        for result in done:
            _print_indexed(result)
        for note in notes:
            say(note)
        say(f"{_plural(len(done), 'source')} indexed or current, {len(failed)} failed")
    for failure in failed:  # most messages name the file already
        message = failure.message
        error_line(message if failure.label in message else f"{failure.label}: {message}")
    return 1 if failed else 0


def _label(path: str | None, source: str | None) -> str:
    from capy.store.content import ContentError

    if path is None or path == STDIN:
        if source is None:
            raise ContentError("give --source LABEL to name content read from standard input")
        if sys.stdin is None or sys.stdin.isatty():
            raise ContentError("nothing on standard input; give a PATH, or pipe content in")
        return source
    return source or path


def _read_input(path: str | None, label: str, size: Size) -> Intake:
    from capy.store.intake import read_file_for_index, read_stream_for_index

    if path is None or path == STDIN:
        return read_stream_for_index(sys.stdin.buffer, size, label=label)
    return read_file_for_index(path, size, label=label)


def _index_parts(path: str | None, label: str, size: Size, store_one) -> list:
    from capy.store.intake import file_parts, part_label, stream_parts

    if path is None or path == STDIN:
        parts = stream_parts(sys.stdin.buffer, size)
    else:
        parts = file_parts(path, size)
    return [store_one(part, part_label(label, number)) for number, part in enumerate(parts, 1)]


def _print_indexed(result: Any) -> None:
    size = human_bytes(result.bytes)
    chunks = _plural(result.chunk_count, "chunk")
    say(f"{result.status} {result.label} ({result.kind}, {result.content_type}): {chunks}, {size}")
    if result.redactions:
        total = sum(result.redactions.values())
        detail = ", ".join(
            f"{rule.removeprefix('secrets.')} {count}"
            for rule, count in sorted(result.redactions.items())
        )
        say(f"redacted {_plural(total, 'secret')} ({detail})")


def search(
    *queries: str,
    limit: Annotated[int | None, Parameter(name="--limit")] = None,
    kind: Annotated[list[str] | None, Parameter(name="--kind")] = None,
    source: Annotated[str | None, Parameter(name="--source")] = None,
    db: DbOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Search the knowledge base; each QUERY is searched on its own.

    Parameters
    ----------
    queries
        One or more queries (quote a query of several words).
    limit
        Hits per query (default: the search pack's).
    kind
        Search sources of this kind; repeat for several (default: durable and session).
    source
        Only this source label, or labels starting with a prefix ending in *.
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print JSON: per query, its hits with label, kind, title, content, snippet, layer, score.
    """

    from capy.cli.knowledge_search import run_search

    return run_search(queries, limit=limit, kinds=kind, source=source, db=db, as_json=as_json)


def reindex(
    *,
    all_sources: Annotated[bool, Parameter(name="--all", negative=())] = False,
    db: DbOption = None,
) -> int:
    """Re-chunk sources indexed with older rules, from their stored raw content.

    Parameters
    ----------
    all_sources
        Re-chunk every source, not only the stale ones.
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    """

    def run() -> int:
        from capy.rules import load_rules
        from capy.store import open_store
        from capy.store.indexing import reindex_stale

        with open_store(db_path=db) as store:
            rules = load_rules(store.location.project_root)
            with progress_bar("re-chunking") as advance:
                count = reindex_stale(store, rules=rules, progress=advance, force=all_sources)
        if count:
            say(f"re-chunked {_plural(count, 'source')} (rules {rules.index_version})")
        else:
            say(f"nothing to re-chunk: every source matches the rules ({rules.index_version})")
        return 0

    return guarded(run)


def cleanup(
    *,
    apply: Annotated[bool, Parameter(name="--apply", negative=())] = False,
    source: Annotated[str | None, Parameter(name="--source")] = None,
    optimize: Annotated[bool, Parameter(name="--optimize", negative=())] = False,
    vacuum: Annotated[bool, Parameter(name="--vacuum", negative=())] = False,
    db: DbOption = None,
    as_json: JsonFlag = False,
) -> int:
    """List what a cleanup would remove (expired, evictable, oversized), or remove it.

    A dry run unless --apply is given (or the retention pack sets cleanup.dry_run: false).
    --optimize and --vacuum remove nothing, so they run in a dry run too.

    Parameters
    ----------
    apply
        Remove what the plan lists.
    source
        Plan removing this one source label (every kind of it) instead.
    optimize
        Merge the full-text indexes' segments (smaller, faster searches).
    vacuum
        Rebuild the database file to give freed space back to the disk.
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    as_json
        Print the plan and what was done as JSON.
    """

    def run() -> int:
        from dataclasses import replace

        from capy.store.retention import apply_cleanup, plan_cleanup

        with _open(db) as (store, rules):
            plan = plan_cleanup(store, rules=rules, source=source)
            applying = apply or not rules.view("retention").cleanup.dry_run
            # A dry run still optimizes and vacuums when asked: neither removes anything.
            todo = plan if applying else replace(plan, items=())
            report = apply_cleanup(store, todo, optimize=optimize, vacuum=vacuum)
        _print_cleanup(plan, report, applying, as_json)
        return 0

    return guarded(run)


def _print_cleanup(plan: Any, report: Any, applied: bool, as_json: bool) -> None:
    from capy.cli.output import print_json

    items = [asdict(item) for item in plan.items]
    if as_json:
        print_json(
            {
                "applied": applied,
                "planned": items,
                "removed": [asdict(item) for item in report.removed],
                "skipped": [asdict(item) for item in report.skipped],
                "optimized": report.optimized,
                "vacuumed": report.vacuumed,
                "notes": list(report.notes),
            }
        )
        return
    if not plan.items:
        say("nothing to remove")
    else:
        _print_plan_table(plan)
        if applied:
            removed = len(report.removed)
            say(f"removed {_plural(removed, 'source')} ({human_bytes(report.raw_bytes)})")
            if report.skipped:
                say(f"left {len(report.skipped)} alone: used or re-indexed since the plan")
        else:
            count = len(plan.items)
            say(
                f"would remove {_plural(count, 'source')} "
                f"({human_bytes(plan.raw_bytes)}); run again with --apply to remove"
            )
    if report.optimized:
        say("merged the full-text index segments")
    if report.vacuumed:
        say("vacuumed the database file")
    for note in report.notes:
        say(f"note: {note}")


def _print_plan_table(plan: Any) -> None:
    from capy.cli.tables import Table, print_table

    rows = [
        [
            item.label,
            item.kind,
            item.reason,
            human_bytes(item.raw_size),
            "" if item.score is None else f"{item.score:.3f}",
            item.tier or "",
        ]
        for item in plan.items
    ]
    print_table(
        Table(("source", "kind", "reason", "size", "score", "tier"), rows, frozenset({3, 4}))
    )
