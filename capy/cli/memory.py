"""`capy memory ...`: thin shells over `capy.memory` (learned rules, anti-patterns, preferences
and principles, a projection of the capsule log)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from cyclopts import App, Parameter

from capy.cli.guard import guarded
from capy.cli.output import say
from capy.cli.store import JsonFlag

app = App(
    name="memory",
    help="What capy learned from sessions: list, browse, show, add, edit, forget, feedback, "
    "stats, export, import, log, learn, rebuild, consolidate.",
)
TypeOption = Annotated[
    str, Parameter(name="--type", help="rule, anti_pattern, preference or principle")
]


def _with_store(action) -> int:
    def run() -> int:
        from capy.capsules import open_capsules
        from capy.capsules.spool import drain_quietly
        from capy.cli.output import error_line

        with open_capsules() as store:
            drain_quietly(store, notify=error_line)
            return action(store)

    return guarded(run)


def _rows(records: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            record["id"][:8],
            record["type"],
            record["status"],
            f"{record['confidence']:.2f}",
            f"{record['helpful']}/{record['harmful']}",
            "yes" if record.get("block_class") and record.get("blocking", True) else "",
            record["text"][:90],
        ]
        for record in records
    ]


def _table(records: list[dict[str, Any]], title: str) -> None:
    from capy.cli.tables import Table, print_table

    columns = ["id", "type", "status", "conf", "+/-", "blocks", "text"]
    print_table(Table(columns, _rows(records), frozenset({3, 4})), title=title)


def _show_records(records: list[dict[str, Any]], as_json: bool, empty: str, what: str) -> int:
    from capy.cli.output import print_json

    if as_json:
        print_json(records)
    elif not records:
        say(empty)
    else:
        _table(records, f"{len(records)} {what}")
    return 0


@app.command(name="list")
def list_records(
    *,
    type: TypeOption | None = None,
    every: Annotated[bool, Parameter(name="--all", negative=())] = False,
    as_json: JsonFlag = False,
) -> int:
    """This project's records, most confident first.

    Parameters
    ----------
    type
        Only records of this type.
    every
        Also deprecated and superseded records.
    as_json
        Print the records as JSON.
    """

    def action(store) -> int:
        from capy.memory.manage import project_records

        records = [
            record
            for record in project_records(store)
            if (type is None or record["type"] == type)
            and (every or record["status"] not in ("deprecated", "superseded"))
        ]
        empty = "no memory records yet: capy learns them from sessions (or capy memory add)"
        return _show_records(records, as_json, empty, "memory records")

    return _with_store(action)


@app.command
def browse() -> int:
    """Browse every record and the capsules it was learned from, in this terminal (q quits)."""
    import sys

    from capy.cli.output import error_line

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        error_line("capy memory browse needs an interactive terminal; use capy memory list there")
        return 2

    def action(store) -> int:
        from capy.memory.manage import project_records, provenance_of
        from capy.memory.tui import MemoryBrowser

        records = project_records(store)
        provenance = {record["id"]: provenance_of(store, record) for record in records}
        MemoryBrowser(records, provenance).run()
        return 0

    return _with_store(action)


@app.command
def show(record: str, /, *, as_json: JsonFlag = False) -> int:
    """One record whole: text, counts, provenance capsules, version chain.

    Parameters
    ----------
    record
        The record's id (its first 4 characters or more).
    as_json
        Print the record as JSON.
    """

    def action(store) -> int:
        from capy.cli.output import print_json
        from capy.memory.manage import find_record

        found = find_record(store, record)
        if as_json:
            print_json(found)
            return 0
        for key in (
            "id",
            "type",
            "status",
            "confidence",
            "text",
            "cause",
            "scope",
            "source",
            "helpful",
            "harmful",
            "failures",
            "block_class",
            "blocking",
            "supersedes",
            "superseded_by",
        ):
            say(f"{key}: {found.get(key)}")
        say(f"sessions: {', '.join(found['sessions'])}")
        say("provenance: " + ", ".join(item[:12] for item in found["provenance"]))
        return 0

    return _with_store(action)


@app.command
def add(
    *text: str,
    type: TypeOption = "rule",
    global_scope: Annotated[bool, Parameter(name="--global", negative=())] = False,
) -> int:
    """Add a record by hand (kept as a capsule, so a rebuild keeps it).

    Parameters
    ----------
    text
        The lesson, in one or two plain sentences (words are joined with spaces).
    type
        The kind of lesson.
    global_scope
        Keep it for every project, not only this one.
    """

    def action(store) -> int:
        from capy.memory.manage import add_record

        record = add_record(
            store, " ".join(text), type, scope="global" if global_scope else "project"
        )
        say(f"{record['id'][:8]} ({record['type']}, {record['confidence']:.2f})")
        return 0

    return _with_store(action)


@app.command
def edit(record: str, /, *, text: str | None = None, block: bool | None = None) -> int:
    """A new version of a record's text (the old one is kept, superseded), or its blocking
    switched on or off (`--no-block` lets the command it forbids run again).

    Parameters
    ----------
    record
        The record's id (its first 4 characters or more).
    text
        The record's new text.
    block
        --block lets an anti-pattern of a blocking class deny its command; --no-block lifts it.
    """

    def action(store) -> int:
        from capy.memory.manage import edit_record

        found = edit_record(store, record, text=text, block=block)
        say(
            f"{found['id'][:8]} ({found['status']}, "
            f"blocks: {bool(found.get('block_class')) and found.get('blocking', True)})"
        )
        return 0

    return _with_store(action)


@app.command
def forget(record: str, /, *, why: str = "") -> int:
    """Remove a record for good: learning will not bring it back from the same capsules.

    Parameters
    ----------
    record
        The record's id (its first 4 characters or more).
    why
        A few words on why, kept with the removal.
    """

    def action(store) -> int:
        from capy.memory.manage import forget_record

        found = forget_record(store, record, why)
        say(f"forgot {found['id'][:8]}: {found['text'][:80]}")
        return 0

    return _with_store(action)


@app.command
def feedback(record: str, verdict: str, /, *, why: str = "") -> int:
    """Say a record helped (helpful) or was wrong (harmful).

    Parameters
    ----------
    record
        The record's id (its first 4 characters or more).
    verdict
        helpful or harmful: its confidence rises or falls.
    why
        A few words on why, kept with the feedback.
    """

    def action(store) -> int:
        from capy.memory.manage import give_feedback

        found = give_feedback(store, record, verdict, why=why)
        say(f"{found['id'][:8]} now {found['confidence']:.2f} ({found['status']})")
        return 0

    return _with_store(action)


@app.command
def stats(*, as_json: JsonFlag = False) -> int:
    """Counts by type and status, blocking records, feedback given."""

    def action(store) -> int:
        from capy.cli.output import print_json
        from capy.memory.manage import stats as figures

        found = figures(store)
        if as_json:
            print_json(found)
        else:
            for key, value in found.items():
                say(f"{key}: {value}")
        return 0

    return _with_store(action)


@app.command
def export(file: Path, /) -> int:
    """Write this project's records as JSON lines to FILE.

    Parameters
    ----------
    file
        The file to write (replaced if it exists).
    """

    def action(store) -> int:
        import json

        from capy.memory.manage import project_records

        records = project_records(store)
        with open(file, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        say(f"{len(records)} records written to {file}")
        return 0

    return _with_store(action)


@app.command(name="import")
def import_file(file: Path, /) -> int:
    """Add the records of a file `capy memory export` wrote (as manual records).

    Parameters
    ----------
    file
        A file of JSON lines that `capy memory export` wrote.
    """

    def action(store) -> int:
        import json

        from capy.capsules.model import CapsuleError
        from capy.memory.manage import import_records

        try:
            lines = file.read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError) as error:
            raise CapsuleError(
                f"{file} is not a file of JSON lines capy memory export wrote "
                f"({type(error).__name__})"
            ) from None
        say(f"{import_records(store, records)} records added")
        return 0

    return _with_store(action)


@app.command
def log(*, limit: int = 30, as_json: JsonFlag = False) -> int:
    """What learning did: records learned, reinforced, rejected by the gate, feedback.

    Parameters
    ----------
    limit
        Entries to show, newest first.
    as_json
        Print the entries as JSON.
    """

    def action(store) -> int:
        import time

        from capy.capsules.sqlite.memory import log_entries
        from capy.cli.output import print_json
        from capy.memory import learn

        learn(store)
        entries = log_entries(store.conn, store.default_scope, limit)
        if as_json:
            print_json([{"at": a, "record": r, "event": e, "detail": d} for a, r, e, d in entries])
            return 0
        from capy.cli.tables import Table, print_table

        rows = [
            [time.strftime("%Y-%m-%d %H:%M", time.gmtime(a)), r[:8], e, d[:90]]
            for a, r, e, d in entries
        ]
        print_table(Table(["when (UTC)", "record", "event", "detail"], rows), title="memory log")
        return 0

    return _with_store(action)


@app.command
def learn(
    *, from_vault: Annotated[bool, Parameter(name="--from-vault", negative=())] = False
) -> int:
    """Learn from capsules not read yet; `--from-vault` first turns archived sessions into
    capsules (once: a second run adds nothing).

    Parameters
    ----------
    from_vault
        First turn the sessions archived in the vault into capsules.
    """

    def action(store) -> int:
        from capy.memory import learn as learn_now

        if from_vault:
            from capy.capsules.backfill import backfill_from_vault
            from capy.vault import open_vault

            with open_vault() as vault:
                backfilled = backfill_from_vault(store, vault)
            say(f"{backfilled.sessions} archived sessions read")
        report = learn_now(store)
        say(
            f"{report.records} records from {report.capsules} capsules in {report.scopes} "
            f"scopes ({report.rejected} rejected by the gate)"
        )
        return 0

    return _with_store(action)


@app.command
def rebuild() -> int:
    """Drop every record and recompute them from the capsule log alone."""

    def action(store) -> int:
        from capy.memory import learn as learn_now

        report = learn_now(store, rebuild=True)
        say(
            f"{report.records} records rebuilt from {report.capsules} capsules in "
            f"{report.scopes} scopes"
        )
        return 0

    return _with_store(action)


@app.command
def consolidate(*, as_json: JsonFlag = False) -> int:
    """The principles consolidated from clusters of related records (learning makes them; this
    shows them)."""

    def action(store) -> int:
        from capy.memory.manage import project_records

        principles = [record for record in project_records(store) if record["type"] == "principle"]
        empty = "no principles yet: a cluster of related records becomes one"
        return _show_records(principles, as_json, empty, "principles")

    return _with_store(action)
