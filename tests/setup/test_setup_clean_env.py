"""What `capy setup` registers starts from any shell, and `capy doctor` says when it does not.

A real `capy setup` (the installed console script, run from a shell with the virtualenv on its
PATH) writes a temp project's and home's files; the registered server command is then started
the way an agent starts it, from an environment with no virtualenv (HOME and a minimal PATH),
and driven with the official MCP SDK client.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN_DIR = Path(sys.executable).parent
CLEAN_PATH = "/usr/bin:/bin"

pytestmark = pytest.mark.skipif(
    shutil.which("capy", path=str(BIN_DIR)) is None,
    reason="the capy console script is not installed beside this Python",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _environment(home: Path, path: str = CLEAN_PATH) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PATH": path,
    }


def _capy(command: str, project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """A capy command typed into a shell whose virtualenv is active."""
    return subprocess.run(
        command,
        shell=True,
        cwd=project,
        env=_environment(home, f"{BIN_DIR}:{CLEAN_PATH}"),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def spaces(tmp_path) -> tuple[Path, Path]:
    project, home = tmp_path / "my project", tmp_path / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    return project.resolve(), home.resolve()


def _local_server(project: Path, home: Path) -> dict:
    state = json.loads((home / ".claude.json").read_text())
    return state["projects"][str(project)]["mcpServers"]["capy"]


async def _tools_of(server: dict, project: Path, home: Path) -> set[str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=server["command"], args=server["args"], cwd=str(project), env=_environment(home)
    )
    with (project / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.anyio
async def test_the_registered_server_starts_without_the_virtualenv(spaces) -> None:
    project, home = spaces
    done = _capy("capy setup", project, home)
    assert done.returncode == 0, done.stderr
    server = _local_server(project, home)
    assert Path(server["command"]).is_absolute() and server["args"] == ["serve"]
    tools = await _tools_of(server, project, home)
    assert "capy_execute" in tools and "capy_hook" not in tools
    # --mcp-hooks: the server is registered with the flag that lists the hook tool.
    done = _capy("capy setup --mcp-hooks", project, home)
    assert done.returncode == 0, done.stderr
    server = _local_server(project, home)
    assert server["args"] == ["serve", "--mcp-hooks"]
    assert "capy_hook" in await _tools_of(server, project, home)


def test_a_registered_hook_answers_a_payload_without_the_virtualenv(spaces) -> None:
    project, home = spaces
    assert _capy("capy setup", project, home).returncode == 0
    settings = json.loads((project / ".claude/settings.local.json").read_text())
    [group] = settings["hooks"]["PreToolUse"]
    command = group["hooks"][0]["command"]
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s-1",
        "cwd": str(project),
        "tool_name": "Bash",
        "tool_input": {"command": "curl -s https://example.com/big.json"},
    }
    run = subprocess.run(
        ["env", "-i", f"PATH={CLEAN_PATH}", f"HOME={home}", "sh", "-c", command],
        input=json.dumps(payload),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode in (0, 2), run.stderr
    assert "not found" not in run.stderr
    assert json.loads(run.stdout)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"


def _doctor(project: Path, home: Path) -> dict:
    report = _capy("capy doctor --json", project, home)
    return {check["name"]: check for check in json.loads(report.stdout)["checks"]}


def test_doctor_fails_a_bare_capy_that_the_agents_shell_cannot_find(spaces) -> None:
    project, home = spaces
    assert _capy("capy setup --command capy", project, home).returncode == 0
    check = _doctor(project, home)["Claude Code"]
    assert check["status"] == "fail", check
    assert "`capy` does not start from a clean shell" in check["detail"]
    assert "--command" in check["fix"]
    # Setup from the same shell without --command writes the absolute path: doctor is happy.
    assert _capy("capy setup", project, home).returncode == 0
    check = _doctor(project, home)["Claude Code"]
    assert check["status"] == "ok", check


def test_python_m_capy_writes_the_console_script_beside_the_interpreter(spaces) -> None:
    project, home = spaces
    done = _capy(f"{sys.executable} -m capy setup --platform cursor --dry-run", project, home)
    assert done.returncode == 0, done.stderr
    # The MCP server gets the console script; hooks get the lean start (a one-line `-c` run by
    # that interpreter with -I -S), which starts in a fraction of the script's time.
    assert f'"command": "{BIN_DIR / "capy"}"' in done.stdout
    import capy

    folder = Path(capy.__file__).resolve().parent.parent
    assert f'"command": "{Path(sys.executable).absolute()} -I -S -c ' in done.stdout
    assert f'sys.path.append(\\"{folder}\\")' in done.stdout  # a JSON string in JSON
    assert "run_lean()' hook --platform cursor preToolUse" in done.stdout


def test_a_chosen_command_is_written_as_given(spaces) -> None:
    project, home = spaces
    done = _capy("capy setup --command 'uvx --from capy-mcp capy' --dry-run", project, home)
    assert done.returncode == 0, done.stderr
    assert '"command": "uvx --from capy-mcp capy hook --platform claude-code Stop"' in done.stdout
    assert '"command": "uvx",' in done.stdout


def test_shared_setup_prints_each_files_note_and_undo_all_takes_every_platform_out(
    spaces,
) -> None:
    project, home = spaces
    done = _capy("capy setup --platform codex --shared", project, home)
    assert done.returncode == 0, done.stderr
    assert "note: .codex/config.toml: Loaded only when the project's .codex/ layer is trusted" in (
        done.stdout
    )
    for platform in ("claude-code", "gemini", "opencode", "kiro"):
        assert _capy(f"capy setup --platform {platform}", project, home).returncode == 0
    done = _capy("capy setup --undo --all --shared", project, home)
    assert done.returncode == 0, done.stderr
    assert not (project / ".codex").exists()
    done = _capy("capy setup --undo --all", project, home)
    assert done.returncode == 0, done.stderr
    left = [path for root in (project, home) for path in root.rglob("*") if path.is_file()]
    assert [path for path in left if ".local" not in path.parts] == []


def test_a_hook_whose_capy_is_gone_never_exits_with_the_blocking_status(tmp_path) -> None:
    # Agents read exit status 2 as "block this call" (Claude Code even drops the prompt);
    # a lean hook start whose capy was uninstalled must fail as a missing console script
    # would: an error the agent shows and goes past.
    import json

    import capy
    from capy.setup.launcher import hook_launcher, resolve_launcher

    argv = hook_launcher(resolve_launcher())
    assert argv[1:4] == ["-I", "-S", "-c"]
    folder = json.dumps(str(Path(capy.__file__).resolve().parent.parent))
    gone = [*argv[:4], argv[4].replace(folder, json.dumps(str(tmp_path / "gone")))]
    done = subprocess.run(
        [*gone, "hook", "--platform", "claude-code", "PreToolUse"],
        input="{}",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
