"""`capy vault show` and `capy.vault.render`: a session read back from the vault as text,
markdown and JSON; tool results folded or shown; secrets redacted in what is displayed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capy.cli import vault as cli

GREETING_FILE = "/home/dev/demo/greet.py"


def edit_session_records(token: str) -> list[dict]:
    """A prompt, an Edit with its structured patch, a failing Bash call, a token in a reply
    and another in a result: the shapes `show` folds, colours and redacts."""
    base = {"sessionId": "edit-demo", "cwd": "/home/dev/demo", "gitBranch": "main"}

    def line(kind: str, uuid: str, minute: int, message: dict, **extra: object) -> dict:
        stamp = f"2026-03-04T05:{minute:02d}:00.000Z"
        return {**base, "type": kind, "uuid": uuid, "timestamp": stamp, "message": message, **extra}

    def result(call_id: str, content: str, **flags: object) -> dict:
        return {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": content, **flags}
            ],
        }

    edit = {"file_path": GREETING_FILE, "old_string": "hello", "new_string": "hello world"}
    patch = {
        "filePath": GREETING_FILE,
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 1,
                "newStart": 1,
                "newLines": 1,
                "lines": ["-print('hello')", "+print('hello world')"],
            }
        ],
    }
    return [
        line("user", "u1", 1, {"role": "user", "content": "please fix the greeting"}),
        line("assistant", "a1", 2, {"id": "m1", "role": "assistant", "model": "claude-test",
             "content": [{"type": "text", "text": f"Using the deploy token {token} here."},
                         {"type": "tool_use", "id": "t1", "name": "Edit", "input": edit}]}),
        line("user", "r1", 3, result("t1", "The file greet.py has been updated."),
             toolUseResult=patch),
        line("assistant", "a2", 4, {"id": "m2", "role": "assistant", "model": "claude-test",
             "content": [{"type": "tool_use", "id": "t2", "name": "Bash",
                          "input": {"command": "python greet.py"}}]}),
        line("user", "r2", 5, result("t2", f"walrus traceback with {token}", is_error=True)),
    ]  # fmt: skip


def write_edit_session(folder: Path, token: str) -> Path:
    path = folder / "edit-demo.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record) for record in edit_session_records(token)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def edit_vault(tmp_path, vault_path, fake_token):
    """The vault path, holding the edit session (imported through the CLI)."""
    write_edit_session(tmp_path / "sessions", fake_token)
    assert cli.import_(source=tmp_path / "sessions", path=vault_path, as_json=True) == 0
    return vault_path


def show(capsys, vault_path: Path, session: str = "edit-demo", **options) -> str:
    capsys.readouterr()
    assert cli.show(session, path=vault_path, **options) == 0
    return capsys.readouterr().out


def test_text_folds_each_result_into_one_line(edit_vault, capsys, snapshot):
    out = show(capsys, edit_vault)
    assert out == snapshot
    folded = [line for line in out.splitlines() if line.startswith("▸ tool")]
    assert len(folded) == 2
    assert "Edit" in folded[0] and "+1 -1" in folded[0] and "error" not in folded[0]
    assert folded[1].endswith("· error") and "Bash" in folded[1]
    assert "walrus traceback" not in out and "hello world" not in out


def test_results_shows_bodies_and_edits_as_unified_diffs(edit_vault, capsys):
    out = show(capsys, edit_vault, results=True)
    assert "▸" not in out
    for expected in (
        f"--- {GREETING_FILE}",
        f"+++ {GREETING_FILE}",
        "@@ -1,1 +1,1 @@",
        "-print('hello')",
        "+print('hello world')",
        "walrus traceback",
    ):
        assert expected in out


def test_markdown_has_a_title_sections_and_a_diff_fence(edit_vault, capsys):
    folded = show(capsys, edit_vault, fmt="markdown")
    assert folded.startswith("# please fix the greeting\n")
    assert "### user · 2026-03-04 05:01" in folded and "```" not in folded
    shown = show(capsys, edit_vault, fmt="markdown", results=True)
    assert "```diff\n--- /home/dev/demo/greet.py\n" in shown


def test_json_carries_folds_and_their_bodies_only_when_asked(edit_vault, capsys):
    folded = json.loads(show(capsys, edit_vault, fmt="json"))
    assert folded["session"] == "claude-code:edit-demo" and folded["results_shown"] is False
    assert folded["project"] == "/home/dev/demo" and folded["git_branch"] == "main"
    roles = [message["role"] for message in folded["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]
    edit_result = folded["messages"][2]
    assert edit_result["tool"] == "Edit" and "diff" not in edit_result
    assert "input" not in folded["messages"][1]["tool_calls"][0]

    shown = json.loads(show(capsys, edit_vault, fmt="json", results=True))
    assert "+print('hello world')" in shown["messages"][2]["diff"]
    error = shown["messages"][4]
    assert error["is_error"] is True and error["text"].startswith("walrus traceback")
    assert shown["messages"][1]["tool_calls"][0]["input"]["file_path"] == GREETING_FILE


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_secrets_are_redacted_in_every_format(edit_vault, capsys, fake_token, fmt):
    out = show(capsys, edit_vault, fmt=fmt, results=True)
    assert fake_token not in out
    assert out.count("[REDACTED:") >= 2  # the reply's token and the error result's


def test_unknown_or_ambiguous_session_is_one_line(edit_vault, tmp_path, capsys, session_writer):
    session_writer(tmp_path / "more", "edit-other", turns=1)
    cli.import_(source=tmp_path / "more", path=edit_vault, as_json=True)
    capsys.readouterr()
    assert cli.show("no-such-session", path=edit_vault) == 2
    assert cli.show("edit-", path=edit_vault) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "capy: no archived session matches 'no-such-session'; `capy vault list` shows their ids",
        "capy: 'edit-' matches 2 sessions (claude-code:edit-demo, claude-code:edit-other); "
        "give more of the id",
    ]


def test_a_codex_session_shows_its_failed_command_and_patch(tmp_path, vault_path, capsys):
    def line(kind: str, payload: dict) -> str:
        return json.dumps(
            {"timestamp": "2026-01-05T10:00:00.000Z", "type": kind, "payload": payload}
        )

    patch = "*** Begin Patch\n*** Update File: kiwi.py\n@@\n-old = 1\n+new = 1\n*** End Patch"
    shell = {"command": ["bash", "-lc", "pytest -q"]}
    lines = [
        line("session_meta", {"id": "0199-codex", "cwd": "/home/dev/codex-demo"}),
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": "rename the kiwi"}]}),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                               "arguments": json.dumps(shell)}),
        line("response_item", {"type": "function_call_output", "call_id": "c1",
                               "output": "Exit code: 1\nwalrus failed"}),
        line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                               "call_id": "c2", "input": patch}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                               "output": "Success"}),
    ]  # fmt: skip
    rollout = tmp_path / "codex" / "2026" / "rollout-2026-01-05T10-00-00-0199.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli.import_(source=tmp_path / "codex", path=vault_path, as_json=True) == 0

    folded = show(capsys, vault_path, "codex:0199-codex")
    assert folded.startswith("codex:0199-codex · rename the kiwi\n")
    assert "▸ tool · 2026-01-05 10:00 · Bash: $ pytest -q · " in folded
    assert folded.count("· error") == 1
    shown = show(capsys, vault_path, "0199", results=True)
    assert "+new = 1" in shown and "walrus failed" in shown


def test_a_corrupt_blob_is_one_line_not_wrong_output(edit_vault, capsys):
    from capy.vault import open_vault

    with open_vault(edit_vault) as vault:
        vault.conn.execute("UPDATE blobs SET data = zeroblob(length(data))")
        vault.conn.commit()
    capsys.readouterr()
    assert cli.show("edit-demo", path=edit_vault) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (error,) = captured.err.splitlines()
    assert error.startswith("capy: blob ") and "no longer matches its hash" in error


def test_render_rejects_an_unknown_format(edit_vault):
    from capy.vault import open_vault
    from capy.vault.render import load_session, render

    with open_vault(edit_vault) as vault:
        loaded = load_session(vault, "claude-code:edit-demo")
    with pytest.raises(ValueError, match="unknown format 'yaml'; use text, markdown, json"):
        render(loaded, "yaml")


def test_every_real_transcript_renders_and_maps_its_search_rows(imported):
    """Each archived session renders in every format, and a search row's ordinal names the
    message it was built from (the TUI opens a hit there)."""
    from capy.store.migrations import chunk_rowid_range
    from capy.vault.render import load_session, render

    vault, report = imported
    assert report.counts["imported"] >= 8
    for session_rowid, label in vault.conn.execute(
        "SELECT id, platform || ':' || session_id FROM sessions"
    ).fetchall():
        loaded = load_session(vault, label)
        first, last = chunk_rowid_range(session_rowid)
        rows = vault.conn.execute(
            "SELECT role FROM messages WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (first, last)
        ).fetchall()
        assert [message.role for message in loaded.indexed] == [role for (role,) in rows]
        for fmt in ("text", "markdown", "json"):
            assert render(loaded, fmt, results=True).strip()


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_terminal_controls_in_a_session_are_shown_as_escapes(
    tmp_path, vault_path, capsys, fake_token, fmt
):
    hostile = f"{fake_token} \x1b]52;c;aGk=\x07 \x1b[2J \x9b1m \u202eevil"
    write_edit_session(tmp_path / "sessions", hostile)
    assert cli.import_(source=tmp_path / "sessions", path=vault_path, as_json=True) == 0
    out = show(capsys, vault_path, fmt=fmt, results=True)
    assert not any(char in out for char in ("\x1b", "\x07", "\x9b", "\u202e"))
    assert fake_token not in out and "]52;c;aGk=" in out
    if fmt == "json":
        json.loads(out)
