"""Draining the capture spool (capy/spooling.py) into the capsule log.

    from capy.capsules.spool import drain_spool
    written = drain_spool(store)

The spool is renamed aside, its records are written in batches (each batch one transaction,
idempotent by capsule id, so a file drained twice writes once), and the file is deleted once
all of it is in. A drain that fails midway leaves the file aside for the next one. One drainer
at a time: a second one finds the lock taken and leaves the work to the first.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.capsules.model import CapsuleDraft, CapsuleError, Scope
from capy.spooling import read_records, set_aside, spools_aside

if TYPE_CHECKING:
    from collections.abc import Callable

    from capy.capsules import CapsuleStore
    from capy.rules.ruleset import RuleSet

HOOK_SOURCE = "hook"


@dataclass
class DrainReport:
    written: int = 0  # new capsules
    already: int = 0  # records whose capsule was in the log already
    torn: int = 0  # partial records skipped (a writer killed mid-line)
    refused: int = 0  # records the log refused (their checks fail)
    problems: list[str] = field(default_factory=list)


def spool_path(store: CapsuleStore) -> Path:
    """`<data_dir>/<spool file>`: where this project's hooks spool capsule records."""
    return project_spool_path(store.location.project_root, store.rules)


def project_spool_path(project_dir: Path, rules: RuleSet) -> Path:
    from capy.config import load_settings

    pack = rules.view("capsules")
    name = pack.capture.spool.file if pack.capture else "capsules.spool.jsonl"
    return load_settings(project_dir).settings.data_dir / name


def spool_pending(path: Path) -> bool:
    """Whether anything waits in the spool at `path` (or in a spool set aside)."""
    return path.exists() or bool(spools_aside(str(path)))


def drain_spool(store: CapsuleStore, path: Path | None = None) -> int:
    """Move every spooled record into `store`; returns how many new capsules were written
    (0 when another drainer holds the lock)."""
    report = drain_spool_report(store, path)
    return report.written if report is not None else 0


def drain_spool_report(store: CapsuleStore, path: Path | None = None) -> DrainReport | None:
    """`drain_spool` with the details; None when another drainer is at work."""
    spool = str(path or spool_path(store))
    lock = _drain_lock(spool)
    if lock is None:
        return None
    try:
        report = DrainReport()
        set_aside(spool)
        for aside in spools_aside(spool):
            _drain_file(store, aside, report)
        return report
    finally:
        os.close(lock)


def _drain_lock(spool: str) -> int | None:
    if not os.path.isdir(os.path.dirname(spool)):
        return None  # nothing was ever spooled here
    fd = os.open(spool + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _drain_file(store: CapsuleStore, aside: str, report: DrainReport) -> None:
    with open(aside, "rb") as stream:
        records, torn = read_records(stream.read())
    report.torn += torn
    batch = store.rules.view("capsules").capture
    size = batch.spool.drain_batch if batch else 500
    for start in range(0, len(records), size):
        _write_batch(store, [_draft(record) for record in records[start : start + size]], report)
    os.unlink(aside)


def _write_batch(
    store: CapsuleStore, drafts: list[CapsuleDraft | None], report: DrainReport
) -> None:
    valid = [draft for draft in drafts if draft is not None]
    report.refused += len(drafts) - len(valid)
    try:
        _count(store.write(valid), report)
    except CapsuleError:
        # One bad record must not hold back the others: write them one by one.
        for draft in valid:
            try:
                _count(store.write([draft]), report)
            except CapsuleError as error:
                report.refused += 1
                report.problems.append(error.message)


def _count(appended: list[Any], report: DrainReport) -> None:
    for each in appended:
        if each.new:
            report.written += 1
        else:
            report.already += 1


def _draft(record: dict[str, Any]) -> CapsuleDraft | None:
    kind, content, project = record.get("kind"), record.get("content"), record.get("project")
    metadata = record.get("metadata") or {}
    if not (isinstance(kind, str) and isinstance(content, str) and isinstance(project, str)):
        return None
    created_at = record.get("created_at")
    # Hooks write no source; the proxy, which spools too, names itself.
    source = record.get("source", HOOK_SOURCE)
    if not isinstance(metadata, dict) or not isinstance(created_at, str):
        return None
    if not isinstance(source, str):
        return None
    return CapsuleDraft(
        kind=kind,
        content=content,
        source=source,
        metadata=metadata,
        created_at=created_at,
        scope=Scope(project),
    )


def drain_quietly(store: CapsuleStore, notify: Callable[[str], None] | None = None) -> int:
    """`drain_spool` for commands that read the log first (and `capy serve` at start): a
    spool that cannot be drained now is left for later, with one line to `notify`."""
    from capy.store.errors import StoreError

    try:
        return drain_spool(store)
    except (StoreError, OSError) as error:
        if notify is not None:
            notify(f"the capture spool was not drained ({getattr(error, 'message', error)})")
        return 0


def drain_for_project(project_dir: Path, rules: RuleSet) -> int:
    """Drain the spool into the project's capsule log when anything waits in it (the log is not
    even opened otherwise); never raising."""
    from capy.capsules import open_capsules
    from capy.rules import RulesError
    from capy.store.errors import StoreError

    try:
        if not spool_pending(project_spool_path(project_dir, rules)):
            return 0
        with open_capsules(project_dir=project_dir, rules=rules, notify=_quiet) as store:
            return drain_quietly(store)
    except (StoreError, OSError, RulesError):
        return 0


def _quiet(_line: str) -> None:
    """Notices (a migration ran) have no reader in the background."""
