"""What every family of `capy bench hostile` shares: a throw-away home and project, capy run
as a real subprocess under a deadline, a real MCP stdio session, and the two signs of a crash.

Nothing here reads or writes the user's own config, keys or knowledge base: every capy process
gets a scratch HOME and XDG folders, and known throw-away keys in CAPY_DB_KEY / CAPY_VAULT_KEY
(the secrets family checks that those keys never come back to an agent).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

TRACEBACK = "Traceback (most recent call last)"
INTERNAL_ERROR = "internal error"
# Long enough for a cold capy start on a loaded 2-core machine, short enough to call a hang.
DEFAULT_DEADLINE = 30.0
# Address space a hostile-input process may map: /dev/zero or a billion laughs must hit this,
# not the machine's memory (a shared machine's OOM killer picks its own victims).
MEMORY_CAP = 2 * 1024**3


@dataclass(frozen=True)
class Scratch:
    """A temp folder holding a home, a git project and the keys every capy process here uses."""

    root: Path
    home: Path
    project: Path
    db_key: str
    vault_key: str

    @property
    def env(self) -> dict[str, str]:
        environ = {
            key: value for key, value in os.environ.items() if not key.startswith(("CAPY_", "XDG_"))
        }
        environ.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            CAPY_DB_KEY=self.db_key,
            CAPY_VAULT_KEY=self.vault_key,
        )
        return environ


@contextmanager
def scratch(prefix: str = "capy-hostile-") -> Iterator[Scratch]:
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        home, project = root / "home", root / "project"
        (project / ".git").mkdir(parents=True)
        home.mkdir()
        yield Scratch(root, home, project, secrets.token_hex(32), secrets.token_hex(32))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def capy_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "capy", *args]


@dataclass(frozen=True)
class Outcome:
    """What one process said and whether it finished before its deadline."""

    stdout: str
    stderr: str
    returncode: int | None
    hung: bool
    seconds: float

    @property
    def text(self) -> str:
        return self.stdout + "\n" + self.stderr

    @property
    def traceback(self) -> bool:
        return TRACEBACK in self.text

    @property
    def internal_error(self) -> bool:
        return INTERNAL_ERROR in self.text.lower()


def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    deadline: float = DEFAULT_DEADLINE,
    memory_cap: int | None = MEMORY_CAP,
) -> Outcome:
    """Run `argv` in a session of its own, its address space capped; past the deadline, kill
    its whole process group."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=None if memory_cap is None else lambda: _cap_memory(memory_cap),
    )
    hung = False
    try:
        out, err = process.communicate(stdin, timeout=deadline)
    except subprocess.TimeoutExpired:
        hung = True
        kill_group(process.pid)
        out, err = process.communicate()
    return Outcome(
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        returncode=None if hung else process.returncode,
        hung=hung,
        seconds=time.perf_counter() - start,
    )


def _cap_memory(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def kill_group(pid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# `capy serve` with its address space capped first, as run_process caps every CLI process.
_CAPPED_SERVE = (
    "import resource, sys; limit = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit)); "
    "sys.argv = ['capy', *sys.argv[2:]]; from capy.entry import run; run()"
)


def serve_params(
    scratch: Scratch, *, env: dict[str, str] | None = None, project: Path | None = None
):
    project = project or scratch.project
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-c", _CAPPED_SERVE, str(MEMORY_CAP), "serve", "--project", str(project)],
        cwd=str(project),
        env=env or scratch.env,
    )


@asynccontextmanager
async def mcp_session(
    scratch: Scratch, *, env: dict[str, str] | None = None, project: Path | None = None
) -> AsyncIterator:
    """A real `capy serve` over stdio, driven by the official MCP SDK client."""
    from mcp import Client
    from mcp.client.stdio import stdio_client

    log_path = scratch.root / f"server-{secrets.token_hex(3)}.log"
    with log_path.open("w", encoding="utf-8") as log:
        client = Client(
            stdio_client(serve_params(scratch, env=env, project=project), errlog=log),
            read_timeout_seconds=120,
        )
        async with client:
            yield client


def reply_text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def last_json(text: str, errors: list[str]) -> dict:
    """The last JSON object line an attacker printed; {} (and a note in `errors`) if none."""
    import json

    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    errors.append(f"the attacker printed no report: {text[-300:]!r}")
    return {}


def which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def write_transcript(
    folder: Path, session: str, texts: list[str], *, extra_line: str | None = None
) -> Path:
    """A small Claude Code transcript: each text as a prompt, a reply and a Bash tool result."""
    import json

    records: list[dict] = []
    for number, text in enumerate(texts):
        base = {
            "sessionId": session,
            "cwd": str(folder),
            "timestamp": f"2026-01-02T03:{number % 60:02d}:00.000Z",
        }
        records += [
            {
                **base,
                "type": "user",
                "uuid": f"u{number}",
                "message": {"role": "user", "content": text},
            },
            {
                **base,
                "type": "assistant",
                "uuid": f"a{number}",
                "message": {
                    "id": f"msg_{number}",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [
                        {"type": "text", "text": f"noted: {text}"},
                        {
                            "type": "tool_use",
                            "id": f"t{number}",
                            "name": "Bash",
                            "input": {"command": "cat notes.txt"},
                        },
                    ],
                },
            },
            {
                **base,
                "type": "user",
                "uuid": f"r{number}",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{number}", "content": text}
                    ],
                },
            },
        ]
    lines = [json.dumps(record) for record in records]
    if extra_line is not None:
        lines.append(extra_line)
    path = folder / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def settled(path: Path, seconds: float = 7200) -> Path:
    """Date a transcript `seconds` back, so `capy sweep` takes it as finished, not live."""
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


@contextmanager
def loopback_server(handler, host: str = "127.0.0.1") -> Iterator[int]:
    """Serve `handler` on a loopback address at a free port (yielded) until the block ends."""
    import threading
    from http.server import ThreadingHTTPServer

    httpd = ThreadingHTTPServer((host, 0), handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def text_page(body: bytes):
    """A request handler that answers every GET with `body` as UTF-8 plain text."""
    from http.server import BaseHTTPRequestHandler

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return Page


def allow_loopback_fetch(scratch: Scratch) -> None:
    """Let capy fetch from 127.0.0.1 in this scratch home: the user opens it on purpose, as a
    user would to read a local page."""
    config = scratch.home / ".config" / "capy"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text('[fetch]\nallow_hosts = ["127.0.0.1"]\n', "utf-8")
