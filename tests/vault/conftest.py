"""Shared pieces for the vault tests: a vault file per test, the real transcripts, and small
synthetic Claude Code sessions."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

FAKE_TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"  # visibly fake, from the secrets pack


@pytest.fixture
def vault_path(tmp_path) -> Path:
    return tmp_path / "vault" / "vault.db"


@pytest.fixture
def claude_transcripts(shared_testdata) -> Path:
    return shared_testdata("claude-transcripts")


@pytest.fixture
def open_test_vault(vault_path):
    from capy.vault import open_vault

    def opener():
        return open_vault(vault_path)

    return opener


@pytest.fixture
def imported(open_test_vault, claude_transcripts):
    """A vault holding every shared transcript; yields (vault, report)."""
    from capy.vault.importer import ImportOptions, import_sessions

    with open_test_vault() as vault:
        report = import_sessions(vault, ImportOptions(source=claude_transcripts))
        yield vault, report


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sha256():
    return sha256_of


@pytest.fixture
def fake_token() -> str:
    return FAKE_TOKEN


@pytest.fixture
def session_writer():
    """write_session(folder, name, turns, extra_line=None) -> the transcript's path."""
    return write_session


def write_session(
    folder: Path,
    name: str,
    turns: int,
    *,
    extra_line: str | None = None,
    first_prompt: str | None = None,
    cwd: str = "/home/dev/demo",
    day: int = 2,
) -> Path:
    """A Claude Code transcript with `turns` prompt/reply pairs and one Read of a secret file;
    `first_prompt` (the session's title) replaces the first prompt's text."""
    records: list[dict] = []
    for number in range(turns):
        stamp = f"2026-01-{day:02d}T03:{number % 60:02d}:00.000Z"
        base = {"sessionId": name, "cwd": cwd, "timestamp": stamp}
        prompt = f"prompt number {number} about zebras"
        records.append(
            {
                **base,
                "type": "user",
                "uuid": f"u{number}",
                "message": {
                    "role": "user",
                    "content": first_prompt if number == 0 and first_prompt else prompt,
                },
            }
        )
        records.append(
            {
                **base,
                "type": "assistant",
                "uuid": f"a{number}",
                "message": {
                    "id": f"msg_{number}",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [
                        {"type": "text", "text": f"reply number {number} with {FAKE_TOKEN}"},
                        {
                            "type": "tool_use",
                            "id": f"t{number}",
                            "name": "Read",
                            "input": {"file_path": f"/home/dev/demo/notes{number}.txt"},
                        },
                    ],
                },
            }
        )
        records.append(
            {
                **base,
                "type": "user",
                "uuid": f"r{number}",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"t{number}",
                            "content": "quokka file body that must stay out of the index",
                        }
                    ],
                },
            }
        )
    lines = [json.dumps(record) for record in records]
    if extra_line is not None:
        lines.append(extra_line)
    path = folder / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


LONG_TITLE = (
    "refactor the authentication middleware so that expired refresh tokens are rejected "
    "before the database is touched, and log why each one was"
)


TUI_VAULT_KEY = "d" * 64  # a raw hex key, so the one vault built for these tests opens in each


@pytest.fixture(scope="session")
def tui_vault_template(tmp_path_factory) -> Path:
    """Built once: twelve sessions in three projects with deep paths, every other one titled
    with a prompt longer than a row, and one long session (`long-talk`, more messages than the
    browser mounts at a time); the folder holds `vault/vault.db` and `sessions/`."""
    import shutil

    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    base = tmp_path_factory.mktemp("tui-vault")
    source = base / "sessions"
    for number in range(12):
        write_session(
            source,
            f"talk-{number:02d}",
            turns=2 + number % 3,
            first_prompt=LONG_TITLE if number % 2 else f"short title {number}",
            cwd=f"/home/dev/projects/client-portal-{number % 3}/services/backend-api",
            day=number + 1,
        )
    write_session(source, "long-talk", turns=45, first_prompt="the long talk", day=20)
    home = base / "home"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("XDG_DATA_HOME", str(home / "data"))
        env.setenv("XDG_CONFIG_HOME", str(home / "config"))
        env.setenv("CAPY_VAULT_KEY", TUI_VAULT_KEY)
        with open_vault(base / "vault" / "vault.db") as vault:
            report = import_sessions(vault, ImportOptions(source=source))
            vault.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert report.counts["imported"] == 13
    # Only a process that had no rules cached yet writes into this home (its caches).
    if home.exists():
        shutil.rmtree(home)
    return base


@pytest.fixture
def tui_vault(tui_vault_template, tmp_path, monkeypatch):
    """A copy of the template vault, open, and a copy of its sessions' folder (the place a
    restore writes back to). Yields (vault, sessions folder)."""
    import shutil

    from capy.vault import open_vault

    shutil.copytree(tui_vault_template / "vault", tmp_path / "vault")
    source = tmp_path / "sessions"
    shutil.copytree(tui_vault_template / "sessions", source)
    monkeypatch.setenv("CAPY_VAULT_KEY", TUI_VAULT_KEY)
    with open_vault(tmp_path / "vault" / "vault.db") as vault:
        # The copy's files sit in this test's folder: a restore goes there, not the template.
        vault.conn.execute(
            "UPDATE sessions SET source_path = ? || substr(source_path, ?)",
            (str(source), len(str(tui_vault_template / "sessions")) + 1),
        )
        vault.conn.commit()
        yield vault, source
