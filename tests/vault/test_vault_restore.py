"""Restore writes every archived file back byte for byte, and never over a different file."""

from __future__ import annotations

import pytest

from capy.vault.errors import RestoreConflictError, UnknownSessionError
from capy.vault.importer import ImportOptions, import_sessions
from capy.vault.restore import restore_session


def test_every_shared_transcript_restores_byte_identical(
    imported, claude_transcripts, tmp_path, sha256
):
    vault, report = imported
    restored: dict[str, str] = {}
    for item in report.sessions:
        out = tmp_path / "out" / item.session_id
        for file in restore_session(vault, f"{item.platform}:{item.session_id}", out):
            restored[str(file.path.relative_to(out))] = sha256(file.path)
    originals = {
        str(_relative_to_session_folder(path)): sha256(path)
        for path in sorted(claude_transcripts.rglob("*.jsonl"))
    }
    assert len(originals) == 10  # 8 transcripts and 2 sidecars
    assert restored == originals


def _relative_to_session_folder(path):
    """`<session>.jsonl`, or `<session>/subagents/agent-*.jsonl` for a sidecar."""
    folder = path.parents[2] if path.parent.name == "subagents" else path.parent
    return path.relative_to(folder)


def test_restore_to_the_original_place_keeps_an_identical_file(
    open_test_vault, tmp_path, session_writer, fake_token
):
    source = tmp_path / "sessions"
    path = session_writer(source, "kept", turns=2)
    with open_test_vault() as vault:
        import_sessions(vault, ImportOptions(source=source))
        assert [f.written for f in restore_session(vault, "kept")] == [False]
        path.unlink()
        (file,) = restore_session(vault, "kept")
    assert file.written and file.path == path
    assert fake_token in path.read_text(encoding="utf-8")  # verbatim: the index alone is redacted


def test_restore_never_overwrites_a_different_file(open_test_vault, tmp_path, session_writer):
    source = tmp_path / "sessions"
    path = session_writer(source, "edited", turns=2)
    with open_test_vault() as vault:
        import_sessions(vault, ImportOptions(source=source))
        path.write_text("someone else's bytes\n", encoding="utf-8")
        with pytest.raises(RestoreConflictError, match="--output"):
            restore_session(vault, "edited")
    assert path.read_text(encoding="utf-8") == "someone else's bytes\n"


def test_session_names_must_match_exactly_one(open_test_vault, tmp_path, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "alpha-1", turns=1)
    session_writer(source, "alpha-2", turns=1)
    with open_test_vault() as vault:
        import_sessions(vault, ImportOptions(source=source))
        with pytest.raises(UnknownSessionError, match="matches 2 sessions"):
            restore_session(vault, "alpha", tmp_path / "out")
        with pytest.raises(UnknownSessionError, match="capy vault list"):
            restore_session(vault, "beta", tmp_path / "out")
        (file,) = restore_session(vault, "claude-code:alpha-2", tmp_path / "out")
    assert file.path.name == "alpha-2.jsonl"
