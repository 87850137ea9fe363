"""The capsule archive: closed days sealed as immutable segments beside the database, exports
that move capsules between machines, and the verified reading both share.

    from capy.capsules.archive import seal_segments

    report = seal_segments(store)  # every closed day not sealed yet; today's capsules wait

- `capy.capsules.archive.segments`: one segment's lines, its encoding, sealing, writing once.
- `capy.capsules.archive.manifest`: the (authenticated) list of a folder's segments.

Why the local archive is encrypted, not only signed: the database is encrypted at rest because
capsules hold what was typed and printed in sessions; redaction removes the secrets its rules
know, not the code, names and paths around them. A plain archive beside it would undo that.
Exports are written plain (the other machine has no shared key): they leave the machine because
the user asked, and their ids and chain links are recomputed on import.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from capy.capsules.archive.manifest import (
    MANIFEST_NAME,
    Manifest,
    SegmentEntry,
    read_manifest,
)
from capy.capsules.archive.segments import (
    PLAIN_SUFFIX,
    SEALED_SUFFIX,
    SealingKey,
    decode_segment,
    encode_segment,
    file_digest,
    record_problem,
    replace_file,
    scope_folder,
    write_once,
)
from capy.capsules.chain import GENESIS
from capy.capsules.model import Capsule, CapsuleError, Scope

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore
    from capy.store.keys import DatabaseKey

Progress = Callable[[int, int], None]


@dataclass
class SealReport:
    folder: Path
    segments: int = 0  # written by this call
    capsules: int = 0  # sealed by this call
    already_sealed: int = 0
    waiting: int = 0  # capsules of days not closed yet (today, or later)
    resealed: int = 0  # segments written again without capsules forgotten since


@dataclass
class ExportReport:
    folder: Path
    segments: int = 0
    capsules: int = 0
    scopes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ArchiveKeys:
    """The local archive's keys, derived from the capsule log's own key."""

    sealing: SealingKey
    mac: bytes

    @classmethod
    def of(cls, key: DatabaseKey) -> ArchiveKeys:
        from capy.store.keys import derived_key

        return cls(
            SealingKey(derived_key(key, "capsules-archive-seal")),
            derived_key(key, "capsules-archive-mac"),
        )


def seal_segments(store: CapsuleStore, *, today: str | None = None) -> SealReport:
    """Seal every capsule of a closed UTC day that no segment holds yet: one new segment per
    scope and day (a day's late arrivals, e.g. a backfill, get a further part), then the
    manifest. Segments already written are never touched."""
    folder = store.location.archive_dir
    keys = ArchiveKeys.of(store.key)
    manifest = read_manifest(folder, keys.mac) or Manifest(sealed=True)
    sealed = manifest.ids()
    today = today or datetime.now(UTC).strftime("%Y-%m-%d")
    report = SealReport(folder)
    groups: dict[tuple[Scope, str], list[Capsule]] = defaultdict(list)
    for _, capsule in store.backend.scan():
        if capsule.id in sealed:
            report.already_sealed += 1
        elif capsule.created_at[:10] >= today:
            report.waiting += 1
        else:
            groups[(capsule.scope, capsule.created_at[:10])].append(capsule)
    entries = _write_segments(folder, groups, keys.sealing)
    if entries:
        manifest.segments.extend(entries)
        replace_file(folder / MANIFEST_NAME, manifest.to_bytes(keys.mac))
    report.resealed = erase_forgotten(store)
    report.segments = len(entries)
    report.capsules = sum(len(entry.ids) for entry in entries)
    return report


def erase_forgotten(store: CapsuleStore) -> int:
    """Erasure reaches the archive too: each segment holding a capsule forgotten since it was
    sealed is sealed again from the log (the capsule as its tombstone), the manifest points at
    the new file, and the old file is deleted: the one exception to segments never changing,
    as erasure is the log's. Returns how many segments were sealed again."""
    folder = store.location.archive_dir
    keys = ArchiveKeys.of(store.key)
    manifest = read_manifest(folder, keys.mac)
    if manifest is None:
        return 0
    forgotten = {capsule.id for _, capsule in store.backend.scan() if capsule.forgotten}
    stale = [
        (index, entry)
        for index, entry in enumerate(manifest.segments)
        if (set(entry.ids) & forgotten) - set(entry.forgotten)
    ]
    replaced = []
    for index, entry in stale:
        capsules = [store.find(capsule)[1] for capsule in entry.ids]
        stem = entry.file.removesuffix(SEALED_SUFFIX).rsplit(".", 1)[0]
        [fresh] = _write_segments(folder, {(entry.scope, entry.day): capsules}, keys.sealing, stem)
        manifest.segments[index] = fresh
        replaced.append(folder / entry.file)
    if replaced:
        replace_file(folder / MANIFEST_NAME, manifest.to_bytes(keys.mac))
        for path in replaced:
            path.unlink(missing_ok=True)
    return len(replaced)


def export_segments(store: CapsuleStore, folder: Path, scope: Scope | None = None) -> ExportReport:
    """Write every capsule (of `scope`) as plain segments with a manifest into `folder`, which
    must be empty or new, for `capy capsules import` on another machine."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise CapsuleError(f"{folder} is not an empty folder: export into a new or empty one")
    groups: dict[tuple[Scope, str], list[Capsule]] = defaultdict(list)
    for _, capsule in store.backend.scan(scope):
        groups[(capsule.scope, capsule.created_at[:10])].append(capsule)
    entries = _write_segments(folder, groups, None)
    replace_file(
        folder / MANIFEST_NAME,
        Manifest(sealed=False, segments=entries, complete=True).to_bytes(None),
    )
    return ExportReport(
        folder,
        segments=len(entries),
        capsules=sum(len(entry.ids) for entry in entries),
        scopes=sorted({f"{entry.scope.tenant}/{entry.scope.project}" for entry in entries}),
    )


def _write_segments(
    folder: Path,
    groups: dict[tuple[Scope, str], list[Capsule]],
    sealing: SealingKey | None,
    stem: str | None = None,
) -> list[SegmentEntry]:
    entries = []
    suffix = SEALED_SUFFIX if sealing is not None else PLAIN_SUFFIX
    for (scope, day), records in sorted(groups.items()):
        records.sort(key=lambda record: record.seq)
        name = _free_name(folder, stem or f"{scope_folder(scope)}/{day}", suffix)
        data = encode_segment(records)
        if sealing is not None:
            data = sealing.seal(data, name)
        write_once(folder / name, data)
        entries.append(
            SegmentEntry(
                file=name,
                scope=scope,
                day=day,
                sha256=file_digest(data),
                ids=tuple(record.id for record in records),
                first_seq=records[0].seq,
                last_seq=records[-1].seq,
                forgotten=tuple(record.id for record in records if record.forgotten),
            )
        )
    return entries


def _free_name(folder: Path, stem: str, suffix: str) -> str:
    """The first part number with no file yet: a file left by a seal that stopped before its
    manifest was written is kept, never reused."""
    part = 1
    while (folder / f"{stem}.{part}{suffix}").exists():
        part += 1
    return f"{stem}.{part}{suffix}"


def read_segments(
    folder: Path, key: DatabaseKey, progress: Progress | None = None
) -> list[Capsule]:
    """Every capsule of a segment folder (an export, or this machine's archive), checked
    before anything is returned: the manifest (and its MAC, where it has one), each file's
    sha256, each id against its fields, each chain link, and the order of each scope's chain.
    Raises a `CapsuleError` naming the first problem."""
    keys = ArchiveKeys.of(key)
    manifest = read_manifest(folder, keys.mac)
    if manifest is None:
        raise CapsuleError(
            f"{folder} has no {MANIFEST_NAME}: point at a folder `capy capsules export` wrote"
        )
    records: list[Capsule] = []
    for done, entry in enumerate(manifest.segments, 1):
        records.extend(_read_entry(folder, entry, keys if manifest.sealed else None))
        if progress is not None:
            progress(done, len(manifest.segments))
    _check_links(records, manifest.complete)
    return records


def _read_entry(folder: Path, entry: SegmentEntry, keys: ArchiveKeys | None) -> list[Capsule]:
    try:
        data = (folder / entry.file).read_bytes()
    except OSError:
        raise CapsuleError(
            f"segment {entry.file} named by the manifest is missing from {folder}: "
            "copy the whole exported folder"
        ) from None
    if file_digest(data) != entry.sha256:
        raise CapsuleError(
            f"segment {entry.file} was altered (its sha256 does not match the manifest): "
            "nothing was imported"
        )
    if keys is not None:
        data = keys.sealing.open(data, entry.file)
    records = decode_segment(data, entry.file)
    if tuple(record.id for record in records) != entry.ids:
        raise CapsuleError(f"segment {entry.file} does not hold the capsules its manifest lists")
    for record in records:
        problem = record_problem(record)
        if problem is None and record.scope != entry.scope:
            problem = f"capsule {record.id[:12]} belongs to another scope than its segment"
        if problem is not None:
            raise CapsuleError(f"segment {entry.file}: {problem}: nothing was imported")
    return records


def _check_links(records: Iterable[Capsule], complete: bool) -> None:
    """Where a scope's capsules n and n+1 are both present, n+1 must follow n; a complete
    folder (an export) must hold each scope's capsules from seq 1 with no gap."""
    by_place = {(record.scope, record.seq): record for record in records}
    for (scope, seq), record in by_place.items():
        before = by_place.get((scope, seq - 1))
        expected = GENESIS if seq == 1 else before.chain_hash if before is not None else None
        if expected is not None and record.prev_hash != expected:
            raise CapsuleError(
                f"capsule {record.id[:12]} does not follow the one before it in its chain: "
                "the segments were altered, nothing was imported"
            )
        if expected is None and complete:
            raise CapsuleError(
                f"capsule {seq - 1} of {scope.tenant}/{scope.project} is missing from the "
                "export: the segments were altered, nothing was imported"
            )
