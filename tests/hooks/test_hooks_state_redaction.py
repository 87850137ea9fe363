"""The session state hooks keep in plain files (prompts and commands, for the PreCompact
snapshot) holds no secret the secrets pack catches: it kept them raw, while everything else
capy stores is redacted first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hooks_helpers import run_hook_process
from planted_secrets import fresh_secrets, planted_text, raw_in


def _hook(event: str, project: Path, **fields) -> None:
    payload = {"session_id": "s-redact", "cwd": str(project), "hook_event_name": event, **fields}
    outcome = run_hook_process(event, json.dumps(payload).encode(), "claude-code", project)
    assert outcome.returncode == 0, outcome.stderr


@pytest.mark.parametrize("capture", [True, False])
def test_prompts_commands_and_errors_are_kept_redacted(project, capture) -> None:
    # With capsule capture off the session's events are still kept (the PreCompact snapshot
    # and the session saved at its end read them), redacted by the same detectors.
    import os

    if not capture:
        (project / ".capy.toml").write_text("[hooks]\ncapture = false\n")
    found = fresh_secrets()
    text = " ".join(planted_text(found).split())
    _hook("UserPromptSubmit", project, prompt=f"deploy with {text}")
    _hook("PostToolUse", project, tool_name="Bash", tool_input={"command": f"echo {text}"})
    _hook(
        "PostToolUseFailure",
        project,
        tool_name="Bash",
        tool_input={"command": "deploy"},
        error=f"refused: {text}",
    )
    data = Path(os.environ["XDG_DATA_HOME"]) / "capy"
    kept = "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in data.rglob("*")
        if path.is_file() and "sessions" in path.parts and "hooks" in path.parts
    )
    assert "[REDACTED:" in kept
    assert raw_in(kept, found) == []
