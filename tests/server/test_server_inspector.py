"""The server driven by the MCP Inspector CLI, the reference client outside the Python SDK.

The Inspector is a pinned local install (`npm install --prefix DIR
@modelcontextprotocol/inspector@0.15.0`, the last release that runs on Node 20) named by
MCP_INSPECTOR_DIR; `.ci/run` installs it and sets that. The test never fetches it itself: with
no install it skips and says how to get one. The Inspector exits 0 even when a tool fails, so
each check reads the JSON it prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest
from server_helpers import STRUCTURED_TOOLS as STRUCTURED
from server_helpers import server_env

INSPECTOR_VERSION = "0.15.0"
INSPECTOR_DIR = os.environ.get("MCP_INSPECTOR_DIR", "")
INSTALL_HINT = (
    f"install it with `npm install --prefix DIR @modelcontextprotocol/inspector@"
    f"{INSPECTOR_VERSION}` and set MCP_INSPECTOR_DIR=DIR (.ci/run does both)"
)


def _installed() -> tuple[Path | None, str]:
    """The Inspector's CLI entry point, or None and why not."""
    if shutil.which("node") is None:
        return None, "Node.js is not installed; the MCP Inspector needs it"
    if not INSPECTOR_DIR:
        return None, f"MCP_INSPECTOR_DIR is not set: {INSTALL_HINT}"
    package = Path(INSPECTOR_DIR) / "node_modules" / "@modelcontextprotocol" / "inspector"
    try:
        manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, f"no MCP Inspector under MCP_INSPECTOR_DIR={INSPECTOR_DIR}: {INSTALL_HINT}"
    if manifest.get("version") != INSPECTOR_VERSION:
        return None, (
            f"MCP_INSPECTOR_DIR holds Inspector {manifest.get('version')}, not the pinned "
            f"{INSPECTOR_VERSION}: {INSTALL_HINT}"
        )
    return package / manifest["bin"]["mcp-inspector"], ""


CLI, WHY_NOT = _installed()
pytestmark = pytest.mark.skipif(CLI is None, reason=WHY_NOT)

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
    "capy_remember": ["kind=decision", "content=Inspector notes stay in notes.md"],
    "capy_recall": ["query=inspector notes", "budget_tokens=300"],
    "capy_memory_search": ["query=run the inspector"],
    "capy_memory_add": ["text=When the inspector lists tools, check every output schema."],
    # Needs a record: called after capy_memory_add, with the id that call returned.
    "capy_memory_feedback": ["verdict=helpful"],
}


def _inspector(project: Path, home: Path, *method: str) -> dict:
    command = ["node", str(CLI), "--cli"]
    for name, value in server_env(home).items():
        command += ["-e", f"{name}={value}"]
    # --mcp-hooks: the hook tool is listed too, so every tool is called.
    serve = ["-m", "capy", "serve", "--project", str(project), "--mcp-hooks"]
    command += [sys.executable, *serve, *method]
    completed = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    return json.loads(completed.stdout)


def test_inspector_lists_and_calls_every_tool(project_dir, server_home):
    (project_dir / "notes.md").write_text("# Notes\n\nThe inspector reads these notes.\n")
    listed = _inspector(project_dir, server_home, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == set(CALLS)
    for tool in tools.values():
        assert tool["annotations"], tool["name"]
        assert tool["inputSchema"]["type"] == "object"
    assert {name for name, tool in tools.items() if "outputSchema" in tool} == STRUCTURED

    def call(name: str, *extra: str) -> tuple[str, dict]:
        given = [*CALLS[name], *extra]
        arguments = [part for argument in given for part in ("--tool-arg", argument)]
        method = ["--method", "tools/call", "--tool-name", name, *arguments]
        return name, _inspector(project_dir, server_home, *method)

    # The index must exist before the search looks for it, and a memory record before the
    # feedback on it; the others are independent.
    results = dict([call("capy_index"), call("capy_memory_add")])
    record = results["capy_memory_add"]["structuredContent"]["record"]["id"]
    results.update([call("capy_memory_feedback", f"record={record}")])
    ordered = ("capy_index", "capy_memory_add", "capy_memory_feedback")
    with ThreadPoolExecutor(max_workers=3) as pool:
        results.update(pool.map(call, [name for name in CALLS if name not in ordered]))
        catalog = pool.map(
            lambda method: _inspector(project_dir, server_home, "--method", method),
            ["resources/list", "prompts/list"],
        )
    for name, result in results.items():
        assert result.get("isError") is not True, (name, result)
        # An empty answer is a hook's "no decision"; every other tool says something.
        assert name == "capy_hook" or result["content"][0]["text"].strip(), name
        if name in STRUCTURED:
            schema = tools[name]["outputSchema"]
            jsonschema.validate(result["structuredContent"], schema)
    assert "inspector-ok" in results["capy_execute"]["content"][0]["text"]
    assert results["capy_execute"]["structuredContent"]["exit_code"] == 0
    assert "batch-ok" in results["capy_batch_execute"]["content"][0]["text"]
    assert "gh issue view" in results["capy_fetch_and_index"]["content"][0]["text"]
    assert "inspector reads" in results["capy_search"]["content"][0]["text"]
    hits = results["capy_search"]["structuredContent"]["results"][0]["hits"]
    assert hits[0]["source"] == "notes"
    resources, prompts = catalog
    assert [resource["name"] for resource in resources["resources"]] == ["notes"]
    assert [prompt["name"] for prompt in prompts["prompts"]] == ["capy_routing"]
