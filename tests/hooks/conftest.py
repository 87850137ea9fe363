"""Hook tests run real `capy hook` processes and `capy.hooks.handle` against a private project
(a `.git` folder marks its root) and a private home, with the golden payloads under payloads/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PAYLOADS = Path(__file__).parent / "payloads"


@pytest.fixture(scope="session")
def rules_cache_file(tmp_path_factory) -> Path:
    """The shipped packs validated once; each test gets a copy of the cache file, as if an
    earlier command had validated them (a full validation per test would take a second)."""
    import os

    home = tmp_path_factory.mktemp("rules-home")
    saved = {key: os.environ.get(key) for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")}
    os.environ.update(
        HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config")
    )
    try:
        from capy.rules import ruleset

        ruleset._load_cached.cache_clear()
        ruleset.load_rules(home)
        ruleset._load_cached.cache_clear()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    [cached] = (home / "data" / "capy" / "cache" / "rules").glob("*.json")
    return cached


@pytest.fixture(autouse=True)
def project(isolated_environment, rules_cache_file) -> Path:
    from capy.config.paths import data_dir

    (isolated_environment / ".git").mkdir()
    target = data_dir() / "cache" / "rules"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(rules_cache_file, target / rules_cache_file.name)
    return isolated_environment


def payload_files() -> list[Path]:
    return sorted(PAYLOADS.glob("*/*.json"))


def load_payload(path: Path, project: Path) -> bytes:
    return path.read_text(encoding="utf-8").replace("$CWD", str(project)).encode()


def native_event(path: Path) -> str:
    """`PreToolUse-bash-curl.json` -> `PreToolUse`; OpenCode names contain dots, not dashes."""
    return path.stem.split("-")[0]


def hook_command(event: str, platform: str) -> list[str]:
    script = Path(sys.executable).with_name("capy")
    if script.is_file():
        return [str(script), "hook", "--platform", platform, event]
    entry = "import sys; from capy.entry import run; sys.exit(run())"
    return [sys.executable, "-c", entry, "hook", "--platform", platform, event]


def run_hook_process(event: str, payload: bytes, platform: str, cwd: Path):
    return subprocess.run(
        hook_command(event, platform), input=payload, capture_output=True, cwd=cwd, timeout=120
    )


def shown(outcome, project: Path) -> dict:
    """What a user sees of an outcome, with the private project path made stable."""
    stdout = outcome.stdout if isinstance(outcome.stdout, str) else outcome.stdout.decode()
    stderr = outcome.stderr if isinstance(outcome.stderr, str) else outcome.stderr.decode()
    exit_code = getattr(outcome, "exit_code", getattr(outcome, "returncode", None))
    stdout = stdout.replace(str(project), "$CWD")
    try:
        body = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        body = stdout
    return {"exit_code": exit_code, "stdout": body, "stderr": stderr.replace(str(project), "$CWD")}
