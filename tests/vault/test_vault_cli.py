"""`capy vault ...` commands, run in-process: what a person sees, and exit codes."""

from __future__ import annotations

import json

from capy.cli import vault as cli


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_import_search_list_restore_stats(vault_path, tmp_path, capsys, session_writer, sha256):
    source = tmp_path / "sessions"
    original = session_writer(source, "cli-session", turns=3)
    assert cli.import_(source=source, path=vault_path) == 0
    assert capsys.readouterr().out.startswith("archived 1 of 1 sessions: 1 files")

    assert cli.search("zebras", role=["user"], path=vault_path, as_json=True) == 0
    (query,) = _json(capsys)["queries"]
    assert query["hits"] and {hit["role"] for hit in query["hits"]} == {"user"}
    assert query["hits"][0]["session"] == "claude-code:cli-session"
    assert query["hits"][0]["project"] == "/home/dev/demo"

    assert cli.search("zebras", project="elsewhere", path=vault_path, as_json=True) == 0
    assert _json(capsys)["queries"][0]["hits"] == []

    assert (
        cli.search(
            "zebras",
            after="2026-01-02T03:01",
            before="2026-01-02T03:02",
            path=vault_path,
            as_json=True,
        )
        == 0
    )
    (query,) = _json(capsys)["queries"]
    assert {hit["timestamp"][:16] for hit in query["hits"]} == {"2026-01-02T03:01"}

    assert cli.list_(path=vault_path, as_json=True) == 0
    (listed,) = _json(capsys)["sessions"]
    assert listed["label"] == "claude-code:cli-session" and listed["messages"] == 9

    assert cli.restore("cli-session", output=tmp_path / "out", path=vault_path) == 0
    assert "restored:" in capsys.readouterr().out
    assert sha256(tmp_path / "out" / "cli-session.jsonl") == sha256(original)

    assert cli.stats(path=vault_path, as_json=True) == 0
    figures = _json(capsys)
    assert figures["sessions"] == 1 and figures["reindex_backlog"] == 0
    assert figures["per_project"] == {"/home/dev/demo": 1}


def test_import_twice_reports_unchanged(vault_path, tmp_path, capsys, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "twice", turns=1)
    cli.import_(source=source, path=vault_path)
    capsys.readouterr()
    assert cli.import_(source=source, path=vault_path, as_json=True) == 0
    assert _json(capsys)["counts"]["unchanged"] == 1


def test_dry_run_without_a_vault_writes_nothing(vault_path, tmp_path, capsys, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "dry", turns=1)
    assert cli.import_(source=source, path=vault_path, dry_run=True) == 0
    assert capsys.readouterr().out.startswith("would archive 1 of 1 sessions")
    assert not vault_path.exists()


def test_mistakes_are_one_line_each(vault_path, tmp_path, capsys):
    assert cli.import_(source=tmp_path / "missing", path=vault_path) == 2
    assert cli.search("x", role=["robot"], path=vault_path) == 2
    assert cli.restore("nothing-like-it", path=vault_path) == 2
    assert cli.search("x", after="last tuesday", path=vault_path) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors == [
        f"capy: --source {tmp_path / 'missing'} is not a folder; give the folder holding the "
        "*.jsonl",
        "capy: unknown role 'robot'; use user, assistant, tool, system",
        "capy: no archived session matches 'nothing-like-it'; `capy vault list` shows their ids",
        "capy: --after 'last tuesday' is not a date or time; write it as 2026-01-31 or "
        "2026-01-31T14:00 (UTC)",
    ]


def test_what_a_person_sees_after_an_import(vault_path, tmp_path, capsys, snapshot, session_writer):
    source = tmp_path / "sessions"
    session_writer(source, "first", turns=2)
    session_writer(source, "second", turns=1, extra_line="{not json")
    cli.import_(source=source, path=vault_path)
    cli.import_(source=source, path=vault_path)
    cli.list_(path=vault_path)
    cli.search("notes1.txt", path=vault_path, limit=3)
    assert capsys.readouterr().out == snapshot
