"""The server driven by the MCP Inspector CLI, the reference client outside the Python SDK.

The Inspector exits 0 even when a tool fails, so each check reads the JSON it prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from server_helpers import server_env

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
# Read before the tests isolate HOME, so npx reuses the machine's package cache.
NPM_CACHE = os.environ.get("NPM_CONFIG_CACHE") or str(Path.home() / ".npm")

pytestmark = pytest.mark.skipif(
    shutil.which("npx") is None, reason="Node.js (npx) is not installed; the Inspector needs it"
)

# Every tool, called once with arguments that work in an empty project.
CALLS = {
    "capy_execute": ["language=shell", "code=echo inspector-ok"],
    "capy_execute_file": ["path=notes.md", "language=python", "code=print(len(FILE_CONTENT))"],
    "capy_batch_execute": [
        'commands=[{"label": "one", "command": "echo batch-ok"}]',
        'queries=["batch"]',
    ],
    "capy_index": ["path=notes.md", "source=notes"],
    "capy_search": ['queries=["inspector notes"]'],
    "capy_fetch_and_index": ["url=https://github.com/example/capy/issues/1"],
    "capy_stats": [],
    "capy_doctor": [],
    "capy_cleanup": ["dry_run=true"],
    "capy_vault_search": ['queries=["migration error"]'],
    "capy_hook": ["event=PreToolUse", "tool_name=Read", "file_path=notes.md"],
}


def _inspector(project: Path, home: Path, *method: str) -> dict:
    command = ["npx", "-y", INSPECTOR, "--cli"]
    for name, value in server_env(home).items():
        command += ["-e", f"{name}={value}"]
    # --mcp-hooks: the hook tool is listed too, so every tool is called.
    serve = ["-m", "capy", "serve", "--project", str(project), "--mcp-hooks"]
    command += [sys.executable, *serve, *method]
    env = {**os.environ, "NPM_CONFIG_CACHE": NPM_CACHE, "NPM_CONFIG_UPDATE_NOTIFIER": "false"}
    completed = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    if completed.returncode != 0 and "ENOTFOUND" in completed.stderr + completed.stdout:
        pytest.skip("the npm registry is unreachable, so the Inspector could not be installed")
    assert completed.returncode == 0, completed.stderr[-2000:]
    return json.loads(completed.stdout)


def test_inspector_lists_and_calls_every_tool(project_dir, server_home):
    (project_dir / "notes.md").write_text("# Notes\n\nThe inspector reads these notes.\n")
    listed = _inspector(project_dir, server_home, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert names == set(CALLS)
    for tool in listed["tools"]:
        assert tool["annotations"], tool["name"]
        assert tool["inputSchema"]["type"] == "object"

    def call(name: str) -> tuple[str, dict]:
        arguments = [part for argument in CALLS[name] for part in ("--tool-arg", argument)]
        method = ["--method", "tools/call", "--tool-name", name, *arguments]
        return name, _inspector(project_dir, server_home, *method)

    # The index call must exist before the search looks for it; the others are independent.
    results = dict([call("capy_index")])
    with ThreadPoolExecutor(max_workers=3) as pool:
        results.update(pool.map(call, [name for name in CALLS if name != "capy_index"]))
    for name, result in results.items():
        assert result.get("isError") is not True, (name, result)
        # An empty answer is a hook's "no decision"; every other tool says something.
        assert name == "capy_hook" or result["content"][0]["text"].strip(), name
    assert "inspector-ok" in results["capy_execute"]["content"][0]["text"]
    assert "batch-ok" in results["capy_batch_execute"]["content"][0]["text"]
    assert "gh issue view" in results["capy_fetch_and_index"]["content"][0]["text"]
    assert "inspector reads" in results["capy_search"]["content"][0]["text"]
