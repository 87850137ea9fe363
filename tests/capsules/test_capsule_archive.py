"""Sealed segments beside the log, exports, and imports of both: round trips and tampering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from capy.canonical import canonical_json
from capy.capsules import CapsuleDraft, CapsuleError, Scope, open_capsules
from capy.capsules.archive import export_segments, seal_segments
from capy.capsules.archive.manifest import MANIFEST_NAME
from capy.capsules.chain import link_hash
from capy.capsules.importing import import_path
from capy.capsules.model import capsule_id

DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")


def drafts(
    count: int, *, day: str | None = None, scope: Scope | None = None, what: str = "note"
) -> list:
    return [
        CapsuleDraft(
            kind="note",
            content=f"{what} {n}: the build failed on {day or DAYS[n % 3]}",
            source="cli",
            metadata={"session_id": f"s{n % 2}", "tags": ["t"]},
            created_at=f"{day or DAYS[n % 3]}T{10 + n % 10:02d}:00:00Z",
            scope=scope,
        )
        for n in range(count)
    ]


def everything(store) -> list[tuple]:
    return [(c.id, c.scope, c.seq, c.prev_hash, c.chain_hash) for _, c in store.backend.scan()]


def test_closed_days_are_sealed_once_and_today_waits(capsules) -> None:
    capsules.write([*drafts(9), CapsuleDraft(kind="note", content="today", source="cli")])
    first = seal_segments(capsules)
    assert (first.segments, first.capsules, first.waiting) == (3, 9, 1)
    folder = capsules.location.archive_dir
    assert folder.name == "capsules-archive"
    sealed = {path: path.read_bytes() for path in folder.rglob("*.sealed")}
    assert len(sealed) == 3
    assert all(b"note 1" not in data for data in sealed.values())  # encrypted at rest
    again = seal_segments(capsules)
    assert (again.segments, again.already_sealed) == (0, 9)
    capsules.write(
        drafts(2, day=DAYS[0], what="late")
    )  # late arrivals for a sealed day: a second part
    late = seal_segments(capsules)
    assert (late.segments, late.capsules) == (1, 2)
    names = sorted(path.name for path in folder.rglob("*.sealed"))
    assert names == [
        f"{DAYS[0]}.1.jsonl.zst.sealed",
        f"{DAYS[0]}.2.jsonl.zst.sealed",
        f"{DAYS[1]}.1.jsonl.zst.sealed",
        f"{DAYS[2]}.1.jsonl.zst.sealed",
    ]
    assert all(path.read_bytes() == data for path, data in sealed.items())  # never rewritten
    assert all(path.stat().st_mode & 0o077 == 0 for path in folder.rglob("*.sealed"))


def test_export_then_import_on_a_second_log_gives_the_same_ids_and_chain(
    capsules, tmp_path
) -> None:
    other_scope = Scope("another-project")
    capsules.write([*drafts(12), *drafts(4, scope=other_scope)])
    report = export_segments(capsules, tmp_path / "export")
    assert (report.capsules, report.segments) == (16, 3 + 3)
    with open_capsules(tmp_path / "second.db") as second:
        imported = import_path(second, tmp_path / "export")
        assert (imported.read, imported.new, imported.known) == (16, 16, 0)
        assert everything(second) == sorted(everything(capsules), key=lambda r: (r[1], r[2]))
        assert all(chain.ok for chain in second.verify())
        again = import_path(second, tmp_path / "export")
        assert (again.new, again.known) == (0, 16)
        assert len(everything(second)) == 16


def test_export_of_one_scope_and_into_a_used_folder(capsules, tmp_path) -> None:
    other_scope = Scope("another-project")
    capsules.write([*drafts(3), *drafts(2, scope=other_scope)])
    report = export_segments(capsules, tmp_path / "one", other_scope)
    assert (report.capsules, report.scopes) == (2, ["local/another-project"])
    with pytest.raises(CapsuleError, match="not an empty folder"):
        export_segments(capsules, tmp_path / "one")


def test_the_local_archive_imports_into_a_fresh_log_with_the_same_key(capsules, tmp_path) -> None:
    capsules.write(drafts(6))
    seal_segments(capsules)
    with open_capsules(tmp_path / "restored.db") as restored:  # same key source: same keys
        imported = import_path(restored, capsules.location.archive_dir)
        assert imported.new == 6
        assert everything(restored) == everything(capsules)


def test_forgotten_capsules_are_exported_as_tombstones_and_left_out(capsules, tmp_path) -> None:
    written = capsules.write(drafts(3, day=DAYS[0]))
    capsules.forget(written[0].id, "pasted by mistake")
    export_segments(capsules, tmp_path / "export")
    text = _lines(tmp_path / "export")
    assert "note 0" not in "".join(text.values())
    with open_capsules(tmp_path / "second.db") as second:
        imported = import_path(second, tmp_path / "export")
        assert (imported.new, imported.forgotten) == (2, 1)


def _segment(folder: Path) -> Path:
    return next(folder.rglob("*.jsonl.zst"))


def _lines(folder: Path) -> dict[Path, str]:
    return {
        path: zstandard.ZstdDecompressor().decompress(path.read_bytes()).decode()
        for path in folder.rglob("*.jsonl.zst")
    }


def _rewrite(folder: Path, change) -> None:
    """Edit one segment's lines with `change`, then make its manifest entry match the new
    bytes, as a careful forger would."""
    segment = _segment(folder)
    lines = [json.loads(line) for line in _lines(folder)[segment].splitlines()]
    change(lines)
    data = zstandard.ZstdCompressor().compress(
        "".join(canonical_json(line) + "\n" for line in lines).encode()
    )
    segment.write_bytes(data)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    for entry in manifest["segments"]:
        if entry["file"] == segment.relative_to(folder).as_posix():
            import hashlib

            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["ids"] = [line["id"] for line in lines]
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))


def _edit_content(lines):
    lines[0]["content"] = "the build passed"


def _edit_and_rehash(lines):
    _edit_content(lines)
    lines[0]["id"] = capsule_id(
        {k: lines[0][k] for k in ("scope", "source", "kind", "content", "metadata", "created_at")}
    )
    lines[0]["chain_hash"] = link_hash(lines[0]["prev_hash"], lines[0]["id"])


def _drop_middle(lines):
    del lines[1]


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (
            lambda folder: _segment(folder).write_bytes(
                _segment(folder).read_bytes()[:-3] + b"xyz"
            ),
            "was altered \\(its sha256 does not match the manifest\\)",
        ),
        (lambda folder: _segment(folder).unlink(), "is missing from"),
        (lambda folder: _rewrite(folder, _edit_content), "does not match its id"),
        (lambda folder: _rewrite(folder, _edit_and_rehash), "does not follow the one before it"),
        (lambda folder: _rewrite(folder, _drop_middle), "is missing from the export"),
        (
            lambda folder: (folder / MANIFEST_NAME).write_text("{"),
            "not a readable segment manifest",
        ),
    ],
    ids=["bytes", "missing", "content", "content-rehashed", "dropped", "manifest"],
)
def test_a_tampered_export_is_refused_and_nothing_is_written(
    capsules, tmp_path, tamper, message
) -> None:
    capsules.write(drafts(4, day=DAYS[0]))
    export_segments(capsules, tmp_path / "export")
    tamper(tmp_path / "export")
    with open_capsules(tmp_path / "second.db") as second:
        with pytest.raises(CapsuleError, match=message):
            import_path(second, tmp_path / "export")
        assert everything(second) == []


def test_a_sealed_manifest_cannot_be_edited_or_read_with_another_key(
    capsules, tmp_path, monkeypatch
) -> None:
    capsules.write(drafts(3))
    seal_segments(capsules)
    folder = capsules.location.archive_dir
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    original = json.dumps(manifest)
    manifest["segments"].pop()
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(CapsuleError, match="was altered or signed with another key"):
        seal_segments(capsules)
    (folder / MANIFEST_NAME).write_text(original)
    monkeypatch.setenv("CAPY_CAPSULES_KEY", "a different passphrase")
    with (
        open_capsules(tmp_path / "elsewhere.db") as elsewhere,
        pytest.raises(CapsuleError, match="signed with another key"),
    ):
        import_path(elsewhere, folder)


def test_forgetting_a_sealed_capsule_reseals_its_segment_without_it(capsules, tmp_path) -> None:
    from capy.capsules.archive import read_segments

    written = capsules.write(drafts(4, day=DAYS[0]))
    seal_segments(capsules)
    folder = capsules.location.archive_dir
    [before] = list(folder.rglob("*.sealed"))
    capsules.forget(written[1].id, "pasted a customer's address")
    [after] = list(folder.rglob("*.sealed"))
    assert after != before and not before.exists()
    records = read_segments(folder, capsules.key)
    assert [record.id for record in records] == [each.id for each in written]
    assert records[1].forgotten and records[1].content == ""
    assert "note 1" not in "".join(record.content for record in records)
    assert seal_segments(capsules).resealed == 0  # nothing more to erase
    with open_capsules(tmp_path / "restored.db") as restored:
        imported = import_path(restored, folder)
        assert (imported.new, imported.forgotten) == (3, 1)
