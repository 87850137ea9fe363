"""`capy setup`, then every hook it registered, run as the host would run it.

For each platform: the installed `capy` console script, run from a shell whose PATH has the
virtualenv (as after `source .venv/bin/activate`), writes the platform's files; the hook
commands are read back from those files exactly as written; each golden payload of that
platform goes through its command in a real shell whose environment has no virtualenv at all
(a minimal PATH, as an agent started from a desktop has), and the answer must be the one the
hooks library gives for that payload.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PAYLOADS = Path(__file__).resolve().parents[1] / "hooks" / "payloads"
# The setup key of each platform, and the folder its golden payloads sit in.
PLATFORMS = {
    "claude-code": "claude-code",
    "codex": "codex",
    "gemini": "gemini-cli",
    "cursor": "cursor",
    "vscode": "vscode-copilot",
    "kiro": "kiro",
    "opencode": "opencode",
}
COMMAND = re.compile(r"hook --platform (?P<platform>[\w.-]+) (?P<event>[\w.-]+)$")
CLEAN_PATH = "/usr/bin:/bin"  # no virtualenv: what an agent started outside it has
BIN_DIR = Path(sys.executable).parent  # where the installed `capy` script lives


def _environment(home: Path, path: str = CLEAN_PATH) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PATH": path,
    }


def _fresh_home(home: Path, rules_cache_file: Path) -> dict[str, str]:
    """A new home whose rules cache is warm, as after any earlier capy command: validating the
    packs cold in every hook process would make this test slow and test nothing more."""
    environment = _environment(home)
    cache = Path(environment["XDG_DATA_HOME"]) / "capy" / "cache" / "rules"
    cache.mkdir(parents=True)
    shutil.copy(rules_cache_file, cache / rules_cache_file.name)
    return environment


def _registered(*roots: Path) -> dict[tuple[str, str], str]:
    """(platform, event) -> the command line of every capy hook written under `roots`."""
    import shlex

    from capy.setup.plan import plugin_commands

    found = {}
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file() or ".git" in path.parts or ".local" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix == ".js":  # OpenCode's plugin runs capy with an argv array
                commands = [shlex.join(argv) for argv in (plugin_commands(text) or {}).values()]
            else:
                commands = list(_strings(json.loads(text))) if path.suffix == ".json" else []
            for command in commands:
                match = COMMAND.search(command)
                if match:
                    found[(match["platform"], match["event"])] = command
    return found


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("setup_key", sorted(PLATFORMS))
def test_setup_then_every_registered_hook_answers_as_documented(
    setup_key, tmp_path, monkeypatch, rules_cache_file
):
    if shutil.which("capy", path=str(BIN_DIR)) is None:
        pytest.skip("the capy console script is not installed beside this Python")
    from capy.hooks import handle

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    setup_home = tmp_path / "setup-home"
    completed = subprocess.run(
        f"capy setup --platform {setup_key}",
        shell=True,
        cwd=project,
        env=_environment(setup_home, f"{BIN_DIR}:{CLEAN_PATH}"),  # the activated virtualenv
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    registered = _registered(project, setup_home)
    platform = PLATFORMS[setup_key]
    assert registered and {key for key, _ in registered} == {platform}

    answered = 0
    decisions = 0
    for number, payload_file in enumerate(sorted((PAYLOADS / platform).glob("*.json"))):
        event = next((e for p, e in registered if payload_file.stem.split("-")[0] == e), None)
        if event is None:
            continue  # a golden payload for an event this platform's files do not register
        payload = payload_file.read_bytes()
        # Each side gets a fresh home, so once-per-session state starts equal on both.
        run = subprocess.run(
            registered[(platform, event)],  # as written, run by a shell without the virtualenv
            shell=True,
            input=payload,
            cwd=project,
            env=_fresh_home(tmp_path / f"hook-home-{number}", rules_cache_file),
            capture_output=True,
            timeout=60,
        )
        library_home = tmp_path / f"library-home-{number}"
        for name, value in _fresh_home(library_home, rules_cache_file).items():
            if name != "PATH":
                monkeypatch.setenv(name, value)
        expected = handle(event, payload, platform=platform, project_dir=project)
        assert run.returncode == expected.exit_code, (payload_file.name, run.stderr)
        assert run.stdout.decode() == expected.stdout, payload_file.name
        assert b"Traceback" not in run.stderr
        answered += 1
        decisions += bool(run.stdout.strip())
    assert answered >= 5, f"only {answered} golden payloads matched registered events"
    # A heavy curl is redirected or denied on every platform: at least one real answer.
    assert decisions >= 1
