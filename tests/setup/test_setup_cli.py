"""`capy setup` as a real process, then `capy doctor` reading back what it wrote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest


def capy(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )


def test_setup_then_doctor_sees_the_registration(workspace) -> None:
    done = capy("setup", "--platform", "codex", "--shared", cwd=workspace.project)
    assert done.returncode == 0, done.stderr
    assert "registered capy in .codex/config.toml" in done.stdout
    report = capy("doctor", "--json", cwd=workspace.project)
    checks = {check["name"]: check for check in json.loads(report.stdout)["checks"]}
    codex = checks["Codex CLI"]
    assert codex["status"] == "ok", codex
    assert re.fullmatch(
        r"MCP in \.codex/config\.toml; hooks for (\d+) of \1 events in \.codex/hooks\.json",
        codex["detail"],
    )


def test_the_opencode_plugin_names_capys_hook_command(workspace) -> None:
    done = capy(
        "setup", "--platform", "opencode", "--shared", "--command", "capy", cwd=workspace.project
    )
    assert done.returncode == 0, done.stderr
    plugin = (workspace.project / ".opencode/plugins/capy.js").read_text()
    assert (
        '"tool.execute.before": [\n    "capy",\n    "hook",\n    "--platform",\n    "opencode"'
        in plugin
    )
    assert "__CAPY_COMMANDS__" not in plugin
    config = json.loads((workspace.project / "opencode.json").read_text())
    assert config["mcp"]["capy"] == {"type": "local", "enabled": True, "command": ["capy", "serve"]}


def test_the_opencode_plugin_is_valid_javascript(workspace, tmp_path) -> None:
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the plugin's syntax cannot be checked here")
    assert (
        capy(
            "setup",
            "--platform",
            "opencode",
            "--shared",
            "--command",
            "capy",
            cwd=workspace.project,
        ).returncode
        == 0
    )
    module = tmp_path / "capy.mjs"  # .mjs: node checks it as the ES module OpenCode loads
    module.write_text((workspace.project / ".opencode/plugins/capy.js").read_text())
    checked = subprocess.run([node, "--check", str(module)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
