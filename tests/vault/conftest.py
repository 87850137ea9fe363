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


def write_session(folder: Path, name: str, turns: int, *, extra_line: str | None = None) -> Path:
    """A Claude Code transcript with `turns` prompt/reply pairs and one Read of a secret file."""
    records: list[dict] = []
    for number in range(turns):
        stamp = f"2026-01-02T03:{number:02d}:00.000Z"
        base = {"sessionId": name, "cwd": "/home/dev/demo", "timestamp": stamp}
        records.append(
            {
                **base,
                "type": "user",
                "uuid": f"u{number}",
                "message": {"role": "user", "content": f"prompt number {number} about zebras"},
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
