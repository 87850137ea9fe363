"""The manifest of a segment folder: each segment's file, scope, day, sha256, capsule ids and
chain range, so a reader can tell a missing, swapped or altered segment from a whole one.

The local archive's manifest carries an HMAC-SHA256 under a key derived from the database's, so
it cannot be edited to match an altered segment. An export's manifest has no MAC (the receiving
machine has no shared key): there, every id and chain link is recomputed from the lines instead.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capy.canonical import canonical_json
from capy.capsules.model import CapsuleError, Scope

FORMAT = "capy-capsules-segments/1"
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class SegmentEntry:
    file: str  # relative to the folder
    scope: Scope
    day: str  # YYYY-MM-DD (UTC) of the capsules' created_at
    sha256: str  # of the file as stored
    ids: tuple[str, ...]  # in seq order
    first_seq: int
    last_seq: int
    forgotten: tuple[str, ...] = ()  # ids the file holds as tombstones only

    def as_json(self) -> dict[str, Any]:
        return {
            "forgotten": list(self.forgotten),
            "file": self.file,
            "scope": self.scope.as_json(),
            "day": self.day,
            "sha256": self.sha256,
            "ids": list(self.ids),
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
        }


@dataclass
class Manifest:
    sealed: bool  # segments encrypted with the archive key (the local archive) or plain (export)
    segments: list[SegmentEntry] = field(default_factory=list)
    # Every capsule of each scope it holds, from seq 1 (an export); the archive holds closed
    # days only, so its chains have gaps where today's capsules wait.
    complete: bool = False

    def body(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "sealed": self.sealed,
            "complete": self.complete,
            "segments": [entry.as_json() for entry in self.segments],
        }

    def ids(self) -> set[str]:
        return {capsule for entry in self.segments for capsule in entry.ids}

    def to_bytes(self, mac_key: bytes | None) -> bytes:
        data = self.body()
        if mac_key is not None:
            data["mac"] = _mac(mac_key, self.body())
        return (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _mac(key: bytes, body: dict[str, Any]) -> str:
    return hmac.new(key, canonical_json(body).encode("utf-8"), hashlib.sha256).hexdigest()


def read_manifest(folder: Path, mac_key: bytes | None) -> Manifest | None:
    """The folder's manifest (None when it has none yet). A manifest with a MAC is checked
    with `mac_key`; a `CapsuleError` says what is wrong with a damaged or altered one."""
    path = folder / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise CapsuleError(f"{path} is not a readable segment manifest: restore it") from None
    try:
        manifest = Manifest(
            sealed=bool(data["sealed"]),
            segments=[_entry(item) for item in data["segments"]],
            complete=bool(data["complete"]),
        )
        if data.get("format") != FORMAT:
            raise ValueError(data.get("format"))
    except (KeyError, TypeError, ValueError):
        raise CapsuleError(
            f"{path} is not a capsule segment manifest ({FORMAT}): point at an exported folder"
        ) from None
    mac = data.get("mac")
    if mac is not None or manifest.sealed:
        if mac_key is None or not isinstance(mac, str):
            raise CapsuleError(f"{path} is signed by another machine's capsule log: use an export")
        if not hmac.compare_digest(mac, _mac(mac_key, manifest.body())):
            raise CapsuleError(
                f"{path} was altered or signed with another key: nothing was read from it"
            )
    return manifest


def _entry(item: dict[str, Any]) -> SegmentEntry:
    file = str(item["file"])
    if ".." in Path(file).parts or Path(file).is_absolute():
        raise ValueError(file)
    return SegmentEntry(
        file=file,
        scope=Scope(str(item["scope"]["project"]), str(item["scope"]["tenant"])),
        day=str(item["day"]),
        sha256=str(item["sha256"]),
        ids=tuple(str(each) for each in item["ids"]),
        first_seq=int(item["first_seq"]),
        last_seq=int(item["last_seq"]),
        forgotten=tuple(str(each) for each in item.get("forgotten", ())),
    )
