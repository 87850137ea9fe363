"""A hook in a project whose config would move capy's data into the working tree: the key is
ignored (one stderr line, the hook still answers), and `capy trust` recompiles the hook's view."""

from __future__ import annotations

import json

from hooks_helpers import run_hook_process

from capy.cli import main
from capy.hooks.compiled import load_hook_rules


def _curl_payload(project) -> bytes:
    body = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "curl https://docs.python.org/3/"},
    }
    return json.dumps(body).encode()


def test_a_hook_keeps_capy_data_out_of_the_working_tree_until_trusted(project):
    (project / ".capy.toml").write_text('data_dir = "leak"\n')
    first = run_hook_process("PreToolUse", _curl_payload(project), "claude-code", project)
    assert first.returncode == 0 and b"updatedInput" in first.stdout
    assert first.stderr.decode().startswith("capy ignored data_dir from ")
    assert not (project / "leak").exists()
    # What the hook process compiled, read back from its cache (still fresh, so not rebuilt).
    assert load_hook_rules(str(project))["data_dir"] != str(project / "leak")

    assert main(["trust", str(project)]) == 0
    trusted = run_hook_process("PreToolUse", _curl_payload(project), "claude-code", project)
    assert trusted.returncode == 0 and b"updatedInput" in trusted.stdout
    assert trusted.stderr == b""
    # Trusting changed the trust file the compiled view watches, so the hook rebuilt it.
    assert load_hook_rules(str(project))["data_dir"] == str(project / "leak")
