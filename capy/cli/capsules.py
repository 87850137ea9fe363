"""`capy capsules ...`: thin shells over `capy.capsules` (the immutable capsule log).

Commands that belong to one part of the capsule system live beside it in their own module and
register here, so this file stays the one list of what `capy capsules` offers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from cyclopts import App, Parameter

from capy.cli.guard import guarded
from capy.cli.output import say
from capy.cli.store import JsonFlag

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore

app = App(
    name="capsules",
    help=(
        "The immutable capsule log: add, list, show, verify, forget, archive, export, import; "
        "distill, status and rebuild its derived rows."
    ),
)
app.command("capy.cli.capsules_log:add", name="add", help="Write one capsule (source cli).")
app.command("capy.cli.capsules_log:list_capsules", name="list", help="The newest capsules.")
app.command("capy.cli.capsules_log:show", name="show", help="One capsule whole.")
app.command(
    "capy.cli.capsules_archive:archive", name="archive", help="Seal closed days into segments."
)
app.command(
    "capy.cli.capsules_archive:export", name="export", help="Write capsules as segments to DIR."
)
app.command(
    "capy.cli.capsules_archive:import_capsules",
    name="import",
    help="Load a JSONL file, an exported folder, or the vault's sessions.",
)
app.command(
    "capy.cli.capsules_pipeline:distill",
    name="distill",
    help="Run the pipeline over waiting capsules.",
)
app.command(
    "capy.cli.capsules_pipeline:status",
    name="status",
    help="Show the pipeline's backlog per stage.",
)
app.command(
    "capy.cli.capsules_pipeline:rebuild",
    name="rebuild",
    help="Drop derived rows and enqueue them again.",
)

CHAIN_BROKEN = 1

PathOption = Annotated[
    Path | None,
    Parameter(name="--path", help="Capsule log to use instead of the default (CAPY_CAPSULES_PATH)"),
]


def drain_before_reading(capsules: CapsuleStore, path: Path | None) -> None:
    """Hooks spool what they capture; a command that reads the default log drains the spool
    first, so it sees every captured capsule (a log chosen by --path is left alone)."""
    if path is None:
        from capy.capsules.spool import drain_quietly
        from capy.cli.output import error_line

        drain_quietly(capsules, notify=error_line)


@app.command
def verify(*, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """Prove that no capsule was altered or dropped: check every scope's hash chain.

    Parameters
    ----------
    as_json
        Print each scope's report as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.cli.output import print_json

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            reports = capsules.verify()
        if as_json:
            print_json(
                [
                    {
                        "scope": report.scope,
                        "capsules": report.capsules,
                        "forgotten": report.forgotten,
                        "ok": report.ok,
                        "problems": report.problems,
                    }
                    for report in reports
                ]
            )
        else:
            if not reports:
                say("no capsules yet: nothing to verify")
            for report in reports:
                state = "ok" if report.ok else f"BROKEN ({len(report.problems)} problems)"
                forgotten = f", {report.forgotten} forgotten" if report.forgotten else ""
                say(f"{report.scope}: {report.capsules} capsules{forgotten}: {state}")
                for problem in report.problems:
                    say(f"  {problem}")
        return 0 if all(report.ok for report in reports) else CHAIN_BROKEN

    return guarded(run)


@app.command
def forget(
    capsule_id: str,
    /,
    *,
    reason: Annotated[str, Parameter(name="--reason")],
    path: PathOption = None,
) -> int:
    """Erase one capsule's content and everything derived from it; its id, its place in the
    chain and the reason stay, so `capy capsules verify` still holds.

    Parameters
    ----------
    capsule_id
        The capsule's id, or at least 6 of its first characters.
    reason
        Why it is erased (kept with the tombstone, redacted).
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            capsule = capsules.forget(capsule_id, reason)
        say(f"forgot capsule {capsule.id[:12]} ({capsule.kind}); its derived rows are gone")
        return 0

    return guarded(run)
