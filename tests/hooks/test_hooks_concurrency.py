"""Hook processes of one session running at once (parallel tool calls) share its state file
without losing an update or saying the one-time guidance twice."""

from __future__ import annotations

import json
import subprocess

from hooks_helpers import hook_command

from capy.hooks.state import read_state

PROCESSES = 12


def payload(project, event: str, **fields) -> bytes:
    body = {"session_id": "parallel", "cwd": str(project), "hook_event_name": event, **fields}
    return json.dumps(body).encode()


def run_all(project, payloads: list[bytes], event: str) -> list[tuple[int, bytes, bytes]]:
    processes = [
        subprocess.Popen(
            hook_command(event, "claude-code"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
        )
        for _ in payloads
    ]
    results = []
    for process, body in zip(processes, payloads, strict=True):
        out, err = process.communicate(body, timeout=120)
        results.append((process.returncode, out, err))
    return results


def warm(project) -> None:
    """Build the hook's rules cache once, so the parallel runs race on the state alone."""
    run_all(project, [payload(project, "Stop")], "Stop")


def test_parallel_post_tool_use_keeps_every_event(project):
    warm(project)
    bodies = [
        payload(project, "PostToolUse", tool_name="Edit", tool_input={"file_path": f"/src/f{i}.py"})
        for i in range(PROCESSES)
    ]
    results = run_all(project, bodies, "PostToolUse")
    assert all(code == 0 and err == b"" for code, _, err in results)
    from capy.config.paths import data_dir

    state = read_state(str(data_dir()), "parallel")
    edits = sorted(item["text"] for item in state["events"]["file-edit"])
    assert edits == sorted(f"/src/f{i}.py" for i in range(PROCESSES))
    assert state["event_count"] == PROCESSES


def test_parallel_first_calls_give_the_guidance_once(project):
    warm(project)
    bodies = [
        payload(project, "PreToolUse", tool_name="Bash", tool_input={"command": f"make t{i}"})
        for i in range(PROCESSES)
    ]
    results = run_all(project, bodies, "PreToolUse")
    assert all(code == 0 and err == b"" for code, _, err in results)
    guided = [out for _, out, _ in results if b"additionalContext" in out]
    assert len(guided) == 1
