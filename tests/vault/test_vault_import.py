"""Importing sessions: verbatim blobs, dedup, the larger copy wins, message rows per the pack."""

from __future__ import annotations

import json

from capy.vault.importer import ImportOptions, import_sessions


def _import(vault, source, **options):
    return import_sessions(vault, ImportOptions(source=source, **options))


def test_real_transcripts_import_with_their_sidecars_compressed(imported, claude_transcripts):
    vault, report = imported
    assert report.counts["failed"] == 0, [s.reason for s in report.sessions if s.reason]
    assert report.counts["imported"] == len(report.sessions) == 8
    long_session = next(s for s in report.sessions if s.session_id.startswith("ae4a77f8"))
    assert long_session.files == 3  # the transcript and its two subagent sidecars
    raw, stored = vault.conn.execute("SELECT sum(size), sum(length(data)) FROM blobs").fetchone()
    assert raw == sum(path.stat().st_size for path in claude_transcripts.rglob("*.jsonl"))
    assert stored * 3 < raw  # zstd at the blob seam
    encodings = {row[0] for row in vault.conn.execute("SELECT encoding FROM blobs")}
    assert encodings <= {"zstd", "identity"} and "zstd" in encodings


def test_import_twice_is_a_no_op(imported, claude_transcripts):
    vault, _ = imported
    before = vault.conn.execute("SELECT total_changes()").fetchone()[0]
    again = _import(vault, claude_transcripts)
    assert again.counts["unchanged"] == len(again.sessions) == 8
    assert vault.conn.execute("SELECT total_changes()").fetchone()[0] == before


def test_message_rows_have_roles_call_summaries_and_the_index_version(imported):
    from capy.rules import load_rules

    vault, _ = imported
    roles = {row[0] for row in vault.conn.execute("SELECT DISTINCT role FROM messages")}
    assert roles == {"user", "assistant", "tool", "system"}
    versions = {row[0] for row in vault.conn.execute("SELECT DISTINCT index_version FROM messages")}
    assert versions == {load_rules().index_version}
    titled = vault.conn.execute(
        "SELECT count(*) FROM messages WHERE role = 'tool' AND title LIKE '$ %'"
    ).fetchone()[0]
    assert titled > 50  # Bash results carry their command's summary


def test_excluded_result_bodies_and_secrets_stay_out_of_the_index(
    open_test_vault, tmp_path, session_writer, fake_token
):
    source = tmp_path / "sessions"
    session_writer(source, "secretive", turns=3)
    with open_test_vault() as vault:
        report = _import(vault, source)
        assert report.counts["imported"] == 1
        text = " ".join(
            f"{title} {body}"
            for title, body in vault.conn.execute("SELECT title, body FROM messages")
        )
        archived = vault.conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert "zebras" in text and "notes1.txt" in text  # prompts and the Read's summary
    assert "quokka" not in text  # Read is an excluded-result tool: its body is left out
    assert fake_token not in text  # redacted in the index...
    assert archived == 1  # ...while the file itself is kept verbatim (see the restore tests)


def test_the_larger_copy_of_a_session_wins(open_test_vault, tmp_path, session_writer):
    first, later = tmp_path / "first", tmp_path / "later"
    session_writer(first, "growing", turns=2)
    session_writer(later, "growing", turns=4)
    with open_test_vault() as vault:
        assert _import(vault, first).counts["imported"] == 1
        grown = _import(vault, later)
        assert grown.counts["replaced"] == 1
        shrunk = _import(vault, first)
        assert shrunk.counts["kept"] == 1
        (size,) = vault.conn.execute("SELECT size FROM sessions").fetchone()
        blobs = vault.conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
        prompts = vault.conn.execute(
            "SELECT count(*) FROM messages WHERE role = 'user'"
        ).fetchone()[0]
    assert size == (later / "growing.jsonl").stat().st_size
    assert blobs == 1  # the smaller copy's blob went with it
    assert prompts == 4  # rows are the larger copy's, not both


def test_dry_run_decides_what_the_real_run_does_and_writes_nothing(
    open_test_vault, tmp_path, session_writer
):
    source = tmp_path / "sessions"
    session_writer(source, "one", turns=2)
    session_writer(source, "two", turns=3)
    with open_test_vault() as vault:
        dry = _import(vault, source, dry_run=True)
        assert vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        real = _import(vault, source)
    assert dry.counts == real.counts and dry.totals == real.totals
    assert dry.counts["imported"] == 2


def test_dry_run_without_a_vault_creates_nothing(vault_path, tmp_path, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "one", turns=1)
    report = import_sessions(None, ImportOptions(source=source, dry_run=True))
    assert report.counts["imported"] == 1
    assert not vault_path.exists()


def test_malformed_lines_are_archived_and_counted(open_test_vault, tmp_path, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "ragged", turns=1, extra_line="{not json")
    with open_test_vault() as vault:
        report = _import(vault, source)
    assert report.sessions[0].outcome == "imported"
    assert report.sessions[0].malformed_lines == 1


def test_identical_files_are_stored_once(open_test_vault, tmp_path, session_writer):
    source = tmp_path / "sessions"
    first = session_writer(source / "a", "same-name", turns=2)
    copy = source / "b" / "other-name.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())
    with open_test_vault() as vault:
        report = _import(vault, source)
        sessions = vault.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
        blobs = vault.conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert report.counts["imported"] == 2
    assert (sessions, blobs) == (2, 1)


def test_project_filter_picks_sessions_by_working_directory(
    open_test_vault, tmp_path, session_writer
):
    source = tmp_path / "sessions"
    session_writer(source, "demo-session", turns=1)  # cwd /home/dev/demo
    with open_test_vault() as vault:
        assert _import(vault, source, project="other", dry_run=True).sessions == []
        assert _import(vault, source, project="demo").counts["imported"] == 1


def test_a_codex_rollout_is_archived_under_its_own_id(open_test_vault, tmp_path):
    def line(kind: str, payload: dict) -> str:
        return json.dumps(
            {"timestamp": "2026-01-05T10:00:00.000Z", "type": kind, "payload": payload}
        )

    rollout = tmp_path / "sessions" / "2026" / "rollout-2026-01-05T10-00-00-0199.jsonl"
    rollout.parent.mkdir(parents=True)
    message = {"type": "message", "role": "user"}
    lines = [
        line("session_meta", {"id": "0199-codex", "cwd": "/home/dev/codex-demo"}),
        line("response_item", {**message, "content": [{"type": "input_text", "text": "hi kiwi"}]}),
    ]
    rollout.write_bytes(("\n".join(lines) + "\n").encode())
    with open_test_vault() as vault:
        report = _import(vault, tmp_path / "sessions")
        row = vault.conn.execute("SELECT platform, session_id, project FROM sessions").fetchone()
    assert report.counts["imported"] == 1
    assert row == ("codex", "0199-codex", "/home/dev/codex-demo")
