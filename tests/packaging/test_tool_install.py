"""`pipx install` and `uv tool install` of this checkout, as the README says, where they exist.

Both resolve capy's dependencies from the package index, so these run only where the tool is
installed (they skip, saying so, elsewhere); the offline wheel test covers the same install
without either tool.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _tool_environment(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    tools = tmp_path / "tools"
    # The rest of the environment stays: the tools need its certificate and proxy settings.
    return {
        **os.environ,
        "HOME": str(home),
        "PIPX_HOME": str(tools / "pipx"),
        "PIPX_BIN_DIR": str(tools / "bin"),
        "PIPX_MAN_DIR": str(tools / "man"),
        "UV_TOOL_DIR": str(tools / "uv"),
        "UV_TOOL_BIN_DIR": str(tools / "bin"),
    }


@pytest.mark.parametrize(
    ("tool", "install", "uninstall"),
    [
        ("pipx", ["install", str(ROOT)], ["uninstall", "capy-mcp"]),
        ("uv", ["tool", "install", str(ROOT)], ["tool", "uninstall", "capy-mcp"]),
    ],
)
def test_a_tool_install_of_the_checkout_runs_capy_elsewhere(tool, install, uninstall, tmp_path):
    program = shutil.which(tool)
    if program is None:
        pytest.skip(f"{tool} is not installed here; test_wheel_install covers the install offline")
    env = _tool_environment(tmp_path)
    installed = subprocess.run(
        [program, *install], capture_output=True, text=True, env=env, timeout=600
    )
    assert installed.returncode == 0, installed.stderr
    capy = Path(env["PIPX_BIN_DIR"]) / "capy"
    project = tmp_path / "elsewhere"
    project.mkdir()
    ran = subprocess.run(
        [str(capy), "execute", "python", "print(6 * 7)"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.stdout.strip() == "42", ran.stderr
    removed = subprocess.run(
        [program, *uninstall], capture_output=True, text=True, env=env, timeout=120
    )
    assert removed.returncode == 0, removed.stderr
    assert not capy.exists()
