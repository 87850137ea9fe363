"""`capy capsules archive | export | import`: seal closed days, move capsules between machines,
and load them in bulk (JSONL, an exported folder, or the session vault)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.capsules import PathOption, drain_before_reading
from capy.cli.guard import guarded
from capy.cli.output import say
from capy.cli.store import JsonFlag


def archive(*, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """Seal every closed day's capsules now: one encrypted segment per scope and day beside the
    log, and an authenticated manifest. Today's capsules wait until the day is over.

    Parameters
    ----------
    as_json
        Print the report as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.capsules.archive import seal_segments
        from capy.cli.output import print_json

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            report = seal_segments(capsules)
        if as_json:
            print_json({**vars(report), "folder": str(report.folder)})
        else:
            say(
                f"sealed {report.capsules} capsules in {report.segments} segments into "
                f"{report.folder} ({report.already_sealed} sealed before, {report.waiting} "
                "waiting for their day to close)"
            )
        return 0

    return guarded(run)


def export(
    folder: Path,
    /,
    *,
    scope: Annotated[str | None, Parameter(name="--scope")] = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Write every capsule (or one scope's) as plain segments with a manifest into a new or
    empty FOLDER, for `capy capsules import FOLDER` on another machine.

    Parameters
    ----------
    folder
        Where to write the segments (new or empty).
    scope
        Only this project (its path or name, as `capy capsules verify` shows after local/).
    as_json
        Print the report as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import Scope, open_capsules
        from capy.capsules.archive import export_segments
        from capy.cli.output import print_json

        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            report = export_segments(capsules, folder, Scope(scope) if scope else None)
        if as_json:
            print_json({**vars(report), "folder": str(report.folder)})
        else:
            say(f"exported {report.capsules} capsules in {report.segments} segments to {folder}")
        return 0

    return guarded(run)


def import_capsules(
    source: Path | None = None,
    /,
    *,
    from_vault: Annotated[bool, Parameter(name="--from-vault", negative=())] = False,
    vault_path: Annotated[Path | None, Parameter(name="--vault")] = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Load capsules in bulk: a JSONL file (one capsule a line: kind, content, metadata,
    created_at, scope, source), a folder `capy capsules export` wrote, or (--from-vault) every
    session archived in the vault. Everything is checked before anything is written, and
    importing twice adds nothing.

    Parameters
    ----------
    source
        The JSONL file or exported folder (not with --from-vault).
    from_vault
        Turn the vault's archived sessions into capsules, with their original times.
    vault_path
        Vault to read instead of the default (also CAPY_VAULT_PATH).
    as_json
        Print the report as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.cli.output import error_line, print_json, progress_bar

        if from_vault == (source is not None):
            error_line("give a JSONL file or an exported folder, or --from-vault (one of them)")
            return 2
        with open_capsules(path) as capsules, progress_bar("importing", quiet=as_json) as bar:
            report = _vault_import(capsules, vault_path, bar) if from_vault else None
            imported = report.imported if report else _path_import(capsules, source, bar)
        extra = {} if report is None else {k: v for k, v in vars(report).items() if k != "imported"}
        if as_json:
            print_json({**imported.as_json(), **extra})
            return 0
        said = f"imported {imported.new} new capsules of {imported.read} read"
        said += f" ({imported.known} were already there)"
        if imported.forgotten:
            said += f"; {imported.forgotten} forgotten ones carry no content and were left out"
        if imported.renamed:
            said += f"; {imported.renamed} were redacted again here and got new ids"
        if report is not None:
            said += f"; from {report.sessions} vault sessions"
            if report.too_large or report.unreadable:
                said += f" ({report.too_large} messages over the size limit and "
                said += f"{report.unreadable} unreadable sessions stay in the vault only)"
        say(said)
        return 0

    return guarded(run)


def _path_import(capsules, source, bar):
    from capy.capsules.importing import import_path

    return import_path(capsules, source, bar)


def _vault_import(capsules, vault_path, bar):
    from capy.capsules.backfill import backfill_from_vault
    from capy.vault import open_vault

    with open_vault(vault_path) as vault:
        return backfill_from_vault(capsules, vault, bar)
