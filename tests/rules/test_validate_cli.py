"""`capy rules validate` on broken overlays: one located, readable error each, snapshotted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from capy.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "overlays"
INVALID = sorted(path.name for path in (FIXTURES / "invalid").glob("*.yaml"))


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["rules", "validate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def local_copy(project_dir):
    """Copy a fixture into the working directory so reported paths are short and stable."""

    def copy(kind: str, name: str) -> str:
        target = project_dir / kind / name
        target.parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURES / kind / name, target)
        return f"{kind}/{name}"

    return copy


def test_shipped_packs_validate_clean(capsys):
    code, out, err = _run(capsys)
    assert code == 0, out + err
    assert out.startswith("ok: ")


def test_valid_overlay_passes(capsys, local_copy):
    code, out, _ = _run(capsys, local_copy("valid", "smaller-chunks.yaml"))
    assert code == 0, out
    assert "detecting rules" in out


@pytest.mark.parametrize("name", INVALID)
def test_invalid_overlay_text(name, capsys, local_copy, snapshot):
    code, out, err = _run(capsys, local_copy("invalid", name))
    assert code == 1
    assert err == ""
    first = out.splitlines()[0]
    assert first.startswith(f"invalid/{name}:"), first
    assert ": error[" in first
    assert out == snapshot


@pytest.mark.parametrize("name", INVALID)
def test_invalid_overlay_json(name, capsys, local_copy, snapshot):
    code, out, _ = _run(capsys, local_copy("invalid", name), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False and report["errors"] >= 1
    first = report["diagnostics"][0]
    assert first["file"] == f"invalid/{name}"
    assert first["line"] >= 1 and first["column"] >= 1 and first["code"] and first["message"]
    assert report == snapshot


def test_verbose_shows_every_schema_error(capsys, local_copy):
    path = local_copy("invalid", "unknown-top-key.yaml")
    _, terse, _ = _run(capsys, path)
    _, verbose, _ = _run(capsys, path, "--verbose")
    assert "1 other error (use --verbose)" in terse
    assert "use --verbose" not in verbose
    assert "missing-key" in verbose


def test_a_folder_of_overlays_is_checked_together(capsys, project_dir):
    folder = project_dir / "overlays"
    folder.mkdir()
    for name in ("disables-unknown-id.yaml", "wrong-type.yaml"):
        shutil.copy(FIXTURES / "invalid" / name, folder / name)
    code, out, _ = _run(capsys, "overlays")
    assert code == 1
    assert "duplicate-pack" in out  # both files call themselves bad-chunking
    assert "overlays/disables-unknown-id.yaml" in out


def test_a_missing_file_is_one_clear_error(capsys):
    code, out, _ = _run(capsys, "no-such-pack.yaml")
    assert code == 1
    assert out.splitlines()[0] == (
        "no-such-pack.yaml:1:1: error[unreadable] cannot read the file: no such file"
    )


def test_binary_and_non_utf8_files_are_refused(capsys, project_dir):
    (project_dir / "nul.yaml").write_bytes(b"pack: x\x00\n")
    (project_dir / "latin1.yaml").write_bytes(b"pack: caf\xe9\n")
    for name, code_name in (("nul.yaml", "not-text"), ("latin1.yaml", "not-text")):
        code, out, _ = _run(capsys, name)
        assert code == 1
        assert f"error[{code_name}]" in out.splitlines()[0]
