"""Bulk loads into the capsule log: a JSONL file of drafts, or a verified segment folder.

Every capsule of an import is read, checked, redacted and hashed before the first is written,
so bad input or a tampered segment stops the import with nothing stored. Writing then goes in
batches of the pack's `archive.import_batch` capsules per transaction; writes are idempotent
by id, so importing the same thing twice adds nothing (and a rerun finishes a stopped one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.capsules.model import CapsuleDraft, CapsuleError, Scope

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore
    from capy.capsules.sqlite.log import Prepared

Progress = Callable[[int, int], None]
IMPORT_SOURCE = "import"


@dataclass
class ImportReport:
    read: int = 0
    new: int = 0
    known: int = 0  # already in the log: skipped, by id
    forgotten: int = 0  # erased capsules in a segment folder: their content is gone, not imported
    renamed: int = 0  # re-redacted under this machine's rules, so stored under a new id

    def as_json(self) -> dict[str, int]:
        return dict(vars(self))


def import_path(store: CapsuleStore, path: Path, progress: Progress | None = None) -> ImportReport:
    """Import a JSONL file or a segment folder (an export, or an archive of this log)."""
    if path.is_dir():
        return import_segments(store, path, progress)
    if not path.is_file():
        raise CapsuleError(f"{path} does not exist: give a JSONL file or an exported folder")
    return import_drafts(store, read_jsonl(path), progress)


def read_jsonl(path: Path) -> Iterator[tuple[str, CapsuleDraft]]:
    """Each line of `path` as (where, draft); a `CapsuleError` names the line that is wrong."""
    try:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    where = f"line {number} of {path.name}"
                    yield where, _draft(line, where)
    except UnicodeDecodeError:
        raise CapsuleError(f"{path} is not UTF-8 text: save it as UTF-8 JSONL") from None
    except OSError as error:
        raise CapsuleError(f"could not read {path}: {error.strerror}") from None


def _draft(line: str, where: str) -> CapsuleDraft:
    try:
        data = json.loads(line)
    except ValueError:
        raise CapsuleError(f"{where} is not JSON: write one capsule object per line") from None
    if not isinstance(data, dict):
        raise CapsuleError(f"{where} is not a JSON object: write one capsule object per line")
    unknown = sorted(set(data) - {"kind", "content", "metadata", "created_at", "scope", "source"})
    if unknown:
        raise CapsuleError(
            f"{where} has unknown fields ({', '.join(unknown)}): a capsule line holds kind, "
            "content, metadata, created_at, scope and source"
        )
    if not isinstance(data.get("kind"), str) or not isinstance(data.get("content"), str):
        raise CapsuleError(f"{where} needs a kind and a content, both text")
    if data.get("created_at") is None:  # "now" would make each import of the file new
        raise CapsuleError(
            f"{where} needs a created_at (ISO 8601): an import keeps when each capsule happened"
        )
    return CapsuleDraft(
        kind=data["kind"],
        content=data["content"],
        source=_text(data.get("source", IMPORT_SOURCE), "source", where),
        metadata=data.get("metadata") or {},
        created_at=_text(data.get("created_at"), "created_at", where),
        scope=_scope(data.get("scope"), where),
    )


def _text(value: Any, name: str, where: str) -> Any:
    if value is not None and not isinstance(value, str):
        raise CapsuleError(f"{where}: {name} must be text")
    return value


def _scope(value: Any, where: str) -> Scope | None:
    """A scope is a project name or path, or {"tenant": ..., "project": ...}; none is the
    importing project's."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return Scope(value)
    if isinstance(value, dict) and isinstance(value.get("project"), str):
        tenant = value.get("tenant", "local")
        if isinstance(tenant, str) and set(value) <= {"tenant", "project"}:
            return Scope(value["project"], tenant)
    raise CapsuleError(f'{where}: scope is a project name or {{"tenant": ..., "project": ...}}')


def import_drafts(
    store: CapsuleStore,
    drafts: Iterable[tuple[str, CapsuleDraft]],
    progress: Progress | None = None,
) -> ImportReport:
    """Prepare every (where, draft) first, then write them in batches."""
    prepared = prepare_all(store, drafts)
    report = ImportReport(read=len(prepared))
    write_prepared(store, prepared, report, progress)
    return report


def prepare_all(store: CapsuleStore, drafts: Iterable[tuple[str, CapsuleDraft]]) -> list[Prepared]:
    """Every draft checked, redacted and hashed; the first bad one stops it, naming where."""
    prepared = []
    for where, draft in drafts:
        try:
            prepared.extend(store.prepare([draft]))
        except CapsuleError as error:
            raise CapsuleError(f"{where}: {error.message}; nothing was imported") from None
    return prepared


def import_segments(
    store: CapsuleStore, folder: Path, progress: Progress | None = None
) -> ImportReport:
    """Import a verified segment folder in each scope's chain order, so a log that had none of
    these capsules ends with the same seqs and chain hashes as the one exported."""
    from capy.capsules.archive import read_segments

    records = sorted(read_segments(folder, store.key), key=lambda r: (r.scope, r.seq))
    live = [record for record in records if not record.forgotten]
    prepared = prepare_all(
        store,
        (
            (
                f"capsule {record.id[:12]} of {folder.name}",
                CapsuleDraft(
                    record.kind,
                    record.content,
                    record.source,
                    record.metadata,
                    record.created_at,
                    record.scope,
                ),
            )
            for record in live
        ),
    )
    report = ImportReport(
        read=len(prepared),
        forgotten=len(records) - len(live),
        renamed=sum(record.id != ready.id for record, ready in zip(live, prepared, strict=True)),
    )
    write_prepared(store, prepared, report, progress)
    return report


def write_prepared(
    store: CapsuleStore,
    prepared: Sequence[Prepared],
    report: ImportReport,
    progress: Progress | None = None,
) -> None:
    batch = store.rules.view("capsules").archive.import_batch
    for start in range(0, len(prepared), batch):
        for appended in store.append(prepared[start : start + batch]):
            if appended.new:
                report.new += 1
            else:
                report.known += 1
        if progress is not None:
            progress(min(start + batch, len(prepared)), len(prepared))
