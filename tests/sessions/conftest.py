"""Shared pieces for the session-transcript tests: the pack, the real transcripts, and a writer
for small synthetic transcripts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

# Older than any settle time: written files count as finished sessions, not live ones.
SETTLED_MTIME = 1_700_000_000


@pytest.fixture(scope="session")
def shipped_rules():
    """The shipped packs alone, validated once per session (no overlays can exist in tests)."""
    from capy.rules.ruleset import build_ruleset

    ruleset = build_ruleset()
    assert ruleset.ok, ruleset.diagnostics
    return ruleset


@pytest.fixture
def transcripts_pack(shipped_rules):
    return shipped_rules.view("transcripts")


@pytest.fixture
def claude_transcripts(shared_testdata) -> Path:
    return shared_testdata("claude-transcripts")


@pytest.fixture
def settled_claude_transcripts(claude_transcripts, tmp_path) -> Path:
    """A copy of the real transcripts aged past settle time: a fresh checkout of the test data
    has just-written files, which the sweep rightly treats as live sessions and leaves alone."""
    copy = tmp_path / "claude-transcripts"
    shutil.copytree(claude_transcripts, copy)
    for path in copy.rglob("*"):
        os.utime(path, (SETTLED_MTIME, SETTLED_MTIME))
    return copy


def write_jsonl(path: Path, records: list, *, settled: bool = True) -> Path:
    """Write records (dicts as JSON, strings as raw lines) and age the file past settle time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [item if isinstance(item, str) else json.dumps(item) for item in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if settled:
        os.utime(path, (SETTLED_MTIME, SETTLED_MTIME))
    return path


def claude_line(kind: str, content, *, cwd: str, session: str = "s-1", **extra) -> dict:
    """One Claude Code transcript line with the fields real lines carry."""
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("message_id", "msg_1")
        message["model"] = "claude-test"
    return {
        "type": kind,
        "sessionId": session,
        "cwd": cwd,
        "timestamp": extra.pop("timestamp", "2026-01-02T03:04:05.000Z"),
        "uuid": extra.pop("uuid", f"u-{kind}-{id(content)}"),
        "message": message,
        **extra,
    }


@pytest.fixture
def jsonl_writer():
    return write_jsonl


@pytest.fixture
def make_claude_line():
    return claude_line
