"""The console script answers `capy hook` without the CLI framework or any heavy library, and
hands everything else to the full CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hooks_helpers import run_hook_process

from capy.entry import parse_hook_arguments

CAPY_SLOW = ("capy.cli", "capy.rules", "capy.config.settings", "capy.store", "capy.security")
HEAVY = (
    "cyclopts",
    "pydantic",
    "pydantic_settings",
    "httpx",
    "mcp",
    "sqlcipher3",
    "ruamel",
    "rich",
)


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["hook", "PreToolUse"], ("PreToolUse", "claude-code")),
        (["hook", "--platform", "gemini-cli", "BeforeTool"], ("BeforeTool", "gemini-cli")),
        (["hook", "--platform=cursor", "preToolUse"], ("preToolUse", "cursor")),
        (
            ["hook", "tool.execute.before", "--platform", "opencode"],
            ("tool.execute.before", "opencode"),
        ),
        (["hook"], None),
        (["hook", "--help"], None),
        (["hook", "A", "B"], None),
        (["hook", "--platform"], None),
        (["search", "hook"], None),
        ([], None),
    ],
)
def test_parse_hook_arguments(argv, parsed):
    assert parse_hook_arguments(argv) == parsed


def test_hook_path_imports_nothing_heavy(project):
    payload = json.dumps(
        {
            "session_id": "s",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "curl https://x.example"},
        }
    )
    probe = (
        "import sys, io\n"
        "from capy.entry import run_hook\n"
        "run_hook('PreToolUse', 'claude-code')\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        f"heavy += [m for m in {CAPY_SLOW!r} if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    run_hook_process("PreToolUse", payload.encode(), "claude-code", project)  # warm the cache
    process = subprocess.run(
        [sys.executable, "-c", probe],
        input=payload.encode(),
        capture_output=True,
        cwd=project,
        timeout=60,
    )
    assert b"updatedInput" in process.stdout
    assert process.stderr.decode().strip() == "HEAVY []"


def test_other_commands_reach_the_cli(project):
    process = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from capy.entry import run; sys.exit(run())",
            "hook",
            "--help",
        ],
        capture_output=True,
        cwd=project,
        timeout=60,
    )
    assert process.returncode == 0
    assert b"--platform" in process.stdout


def test_cli_command_gives_the_same_answer(project):
    payload = json.dumps(
        {
            "session_id": "s",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "WebFetch",
            "tool_input": {"url": "https://example.com/"},
        }
    ).encode()
    via_cli = subprocess.run(
        [sys.executable, "-m", "capy", "hook", "PreToolUse", "--platform", "claude-code"],
        input=payload,
        capture_output=True,
        cwd=project,
        timeout=60,
    )
    direct = run_hook_process("PreToolUse", payload, "claude-code", project)
    assert via_cli.returncode == direct.returncode == 0
    assert json.loads(via_cli.stdout) == json.loads(direct.stdout)
    assert json.loads(direct.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _ended(probe: str, tmp_path) -> subprocess.CompletedProcess[bytes]:
    script = "import sys, atexit\nfrom capy.entry import end_hook\n" + probe
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=60
    )


def test_end_hook_keeps_the_answer_and_the_exit_functions(tmp_path):
    # What a hook writes, unflushed, still reaches the agent; exit functions still run; the
    # interpreter is not torn down (an object's finaliser at teardown never runs).
    marker = tmp_path / "exit-function-ran"
    process = _ended(
        f"atexit.register(lambda: open({str(marker)!r}, 'w').close())\n"
        "class Late:\n"
        "    def __del__(self): print('torn down', file=sys.stderr)\n"
        "kept = Late()\n"
        "sys.stdout.buffer.write(b'{\"answer\": 1}')\n"
        "sys.stderr.write('a note')\n"
        "end_hook(3)\n",
        tmp_path,
    )
    assert process.returncode == 3
    assert process.stdout == b'{"answer": 1}'
    assert process.stderr == b"a note"
    assert marker.exists()


def test_end_hook_waits_for_a_thread_as_a_normal_exit_does(tmp_path):
    marker = tmp_path / "thread-finished"
    process = _ended(
        "import threading, time\n"
        "def work():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "threading.Thread(target=work).start()\n"
        "end_hook(0)\n",
        tmp_path,
    )
    assert process.returncode == 0
    assert marker.exists()
