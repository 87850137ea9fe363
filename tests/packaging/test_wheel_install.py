"""The built wheel, installed into a fresh virtualenv, runs capy from outside the checkout.

What a `pipx install` or `uv tool install` does, without the network: build the wheel from this
checkout, install it alone (`--no-deps --no-index`) into a new venv that borrows the dev venv's
dependencies through a `.pth` line, then run the installed `capy` from a folder far from the
checkout. The packs and schemas must come from the wheel, and `capy setup` must register the
venv's own console script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from capy import DISTRIBUTION as INDEX_NAME
from capy import __version__

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = INDEX_NAME.replace("-", "_")  # as wheel file names spell it
WHERE_FROM = (
    "import capy; from capy.rules.resources import shipped_rules; "
    "print(capy.__file__); print(shipped_rules())"
)


def _run(argv: list[str], **options) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, **options)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("hatchling", reason="the dev extra's hatchling builds the wheel offline")
    out = tmp_path_factory.mktemp("wheel")
    _run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--no-index", "--quiet", "--wheel-dir", str(out), str(ROOT)),
        ]
    )
    (built,) = out.glob(f"{DISTRIBUTION}-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the wheel; its dependencies are the dev venv's."""
    target = tmp_path_factory.mktemp("venv") / "capy-venv"
    venv.create(target, with_pip=False, symlinks=True)
    python = target / "bin" / "python"
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    # Appended after the venv's own site-packages, and its .pth files are not read: the dev
    # venv's editable capy stays invisible, its dependencies do not.
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"),
            *("--no-deps", "--no-index", str(wheel)),
        ]
    )
    return target


def test_the_wheel_carries_the_packs_schemas_and_plugin(wheel) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, suffix in (("rules", ".yaml"), ("schemas", ".json")):
        shipped = {path.name for path in (ROOT / folder).iterdir() if path.suffix == suffix}
        assert shipped
        assert {f"capy/_data/{folder}/{name}" for name in shipped} <= names
    assert "capy/setup/opencode_plugin.js" in names
    metadata = zipfile.ZipFile(wheel).read(f"{DISTRIBUTION}-{__version__}.dist-info/METADATA")
    assert f"\nName: {INDEX_NAME}\n".encode() in metadata


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A project folder far from the checkout, with a private home (one for the module, so the
    rules cache capy keeps there is warm after the first command)."""
    root = tmp_path_factory.mktemp("outside")
    project, home = root / "elsewhere", root / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return project, env


def test_the_installed_capy_runs_from_outside_the_checkout(installed, outside) -> None:
    project, env = outside
    capy = str(installed / "bin" / "capy")
    where = _run(
        [str(installed / "bin" / "python"), "-c", WHERE_FROM],
        cwd=project,
        env=env,
    )
    package, packs = (Path(line) for line in where.stdout.splitlines())
    assert package.is_relative_to(installed)
    assert packs.is_relative_to(installed)  # the packs in force are the wheel's own copy

    validated = _run([capy, "rules", "validate"], cwd=project, env=env)
    shipped = len(list((ROOT / "rules").glob("*.yaml")))
    assert validated.stdout.startswith(f"ok: {shipped} files, {shipped} packs")
    ran = _run([capy, "execute", "python", "print(6 * 7)"], cwd=project, env=env)
    assert ran.stdout.strip() == "42"


def test_setup_from_the_install_registers_its_own_script_and_uninstall_removes_it(
    installed, outside
) -> None:
    project, env = outside
    capy = str(installed / "bin" / "capy")
    _run([capy, "setup"], cwd=project, env=env)
    state = json.loads((Path(env["HOME"]) / ".claude.json").read_text())
    server = state["projects"][str(project.resolve())]["mcpServers"]["capy"]
    assert server["command"] == capy
    done = _run([capy, "uninstall"], cwd=project, env=env)
    assert "Claude Code: deleted .claude/settings.local.json" in done.stdout
    assert not (project / ".claude").exists()
    assert not os.path.exists(Path(env["HOME"]) / ".claude.json")
