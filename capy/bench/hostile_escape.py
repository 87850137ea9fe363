"""Escape attempts: sandboxed code that tries to outlive its call, and who is still alive after.

Each attempt starts a "survivor": a loop in shell, python or perl whose command line carries a
unique tag, which writes its own pid to a file in the home folder. The attempt differs in how
it hides (background `&`, nohup, double fork, setsid, CAPY_SANDBOX_ID dropped with `env -i`, or
forged); the call either returns at once or is stopped by its timeout. After the call, and
again after the capy process (CLI, library worker, MCP server) has exited, a survivor whose pid
is alive and whose command line still carries its tag counts. Every survivor is killed at the
end, whatever happened; the tag check makes sure no other process is ever signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from capy.bench.hostile_common import Scratch, capy_command, run_process, which
from capy.bench.hostile_escape_attempts import (
    ATTEMPTS,
    CALL_TIMEOUT,
    ENDED_EARLY_MODES,
    PID_WAIT,
    SURVIVOR,
    TAG,
    Attempt,
    Selection,
    ended_early_attempts,
    leaving_session,
    shedding_marker,
)


@dataclass
class Planted:
    """One attempt as launched: where its pid lands and the tag its command line carries."""

    attempt: str
    path: str  # "library", "cli", "mcp"
    mode: str  # "returns", "timeout", or how an MCP call was ended early (ENDED_EARLY_MODES)
    pidfile: Path
    tag: str
    after_call: bool | None = None
    after_exit: bool | None = None
    error: str | None = None

    def pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def alive(self) -> bool:
        pid = self.pid()
        return pid is not None and tagged_alive(pid, self.tag)


def tagged_alive(pid: int, tag: str) -> bool:
    """Alive, not a zombie, and still ours: the tag is in its command line."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and tag.encode() in cmdline


def kill_survivor(planted: Planted) -> None:
    """SIGKILL a survivor that is still ours, and wait (briefly) until it is gone. One whose
    pid file never came (it could not write it) is found by its unique tag instead."""
    pid = planted.pid()
    if pid is None:
        pid = next(iter(pids_tagged(planted.tag)), None)
    if pid is None or not tagged_alive(pid, planted.tag):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2
    while tagged_alive(pid, planted.tag) and time.monotonic() < deadline:
        time.sleep(0.01)


def pids_tagged(tag: str) -> list[int]:
    """Processes alive now whose command line carries `tag` (a survivor's unique tag)."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and tagged_alive(int(entry.name), tag)
    ]


def tools_available() -> dict[str, str | None]:
    return {
        "sh": which("sh"),
        "python": sys.executable,
        "perl": which("perl"),
        "setsid": which("setsid"),
        "env": which("env"),
    }


def _survivor_argv(tools: dict[str, str], language: str, pidfile: Path, tag: str) -> list[str]:
    loop = SURVIVOR[language].format(pidfile=str(pidfile))
    if language == "sh":
        return [tools["sh"], "-c", loop, tag]
    if language == "python":
        return [tools["python"], "-c", loop, tag]
    return [tools["perl"], "-e", loop, tag]


def plan(
    folder: Path, path: str, mode: str, attempts: tuple[Attempt, ...]
) -> list[tuple[Planted, str, str]]:
    """(planted, language, code) for each attempt that can run here."""
    tools = tools_available()
    planned = []
    for index, attempt in enumerate(attempts):
        needed = {"shell": "sh", "python": "python", "perl": "perl"}[attempt.language]
        if not tools.get(needed) or not tools.get("setsid") or not tools.get("env"):
            continue
        survivor_language = "sh" if attempt.language == "shell" else attempt.language
        tag = f"{TAG}-{secrets.token_hex(6)}"
        pidfile = folder / f"{path}-{mode}-{index}.pid"
        argv = _survivor_argv(tools, survivor_language, pidfile, tag)
        wait = _wait_for(attempt.language, pidfile, mode)
        code = attempt.code(tools, argv, pidfile, wait)
        planted = Planted(attempt.name, path, mode, pidfile, tag)
        planned.append((planted, attempt.language, code))
    return planned


def _wait_for(language: str, pidfile: Path, mode: str) -> str:
    """Code that waits for the survivor's pid file, then returns or outstays the timeout."""
    # Every mode but "returns" outstays its end: a timeout, a cancellation, the server's exit.
    linger = 0 if mode == "returns" else CALL_TIMEOUT * 10
    if language == "shell":
        text = f"n=0; while [ ! -s '{pidfile}' ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done"
        return text + (f"\nsleep {linger}" if linger else "")
    if language == "python":
        text = (
            "import os as _o, time as _t\n_d = _t.time() + 5\n"
            f"while not (_o.path.exists({str(pidfile)!r}) and _o.path.getsize({str(pidfile)!r})) "
            "and _t.time() < _d: _t.sleep(0.05)"
        )
        return text + (f"\n_t.sleep({linger})" if linger else "")
    text = (
        f"my $n = 0; while (!-s '{pidfile}' && $n++ < 100) {{ select(undef, undef, undef, 0.05); }}"
    )
    return text + (f"\nsleep {int(linger)};" if linger else "")


def settle() -> None:
    """A killed call's descendants need a moment to be reaped by whoever tracks them."""
    time.sleep(0.5)


# ---- the three paths: library API (in a worker process), CLI, MCP --------------------------


def via_library(scratch: Scratch, planned: list[tuple[Planted, str, str]]) -> None:
    """Run each attempt through `capy.api.execute.execute_code` in one worker process; the
    worker checks survivors after each call, this process checks again after it exits."""
    jobs = [
        {
            "language": language,
            "code": code,
            "timeout": CALL_TIMEOUT if p.mode == "timeout" else None,
            "pidfile": str(p.pidfile),
            "tag": p.tag,
        }
        for p, language, code in planned
    ]
    jobs_file = scratch.root / f"library-jobs-{secrets.token_hex(3)}.json"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    argv = [
        sys.executable,
        "-c",
        "import sys; from capy.bench.hostile_escape import library_worker; "
        "library_worker(sys.argv[1])",
        str(jobs_file),
    ]
    deadline = 30 + len(jobs) * (CALL_TIMEOUT * 3 + PID_WAIT)
    outcome = run_process(argv, env=scratch.env, cwd=scratch.project, deadline=deadline)
    try:
        verdicts = json.loads(outcome.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        verdicts = [{"error": f"the worker failed: {outcome.stderr.strip()[-300:]}"}] * len(jobs)
    settle()
    for (planted, _, _), verdict in zip(planned, verdicts, strict=False):
        planted.after_call = verdict.get("alive")
        planted.error = verdict.get("error")
        planted.after_exit = planted.alive()


def library_worker(jobs_file: str) -> None:
    """Entry of the library worker process (see `via_library`)."""
    from capy.api import Workspace
    from capy.api.execute import execute_code

    workspace = Workspace(Path.cwd())
    verdicts = []
    for job in json.loads(Path(jobs_file).read_text(encoding="utf-8")):
        verdict: dict = {}
        try:
            execute_code(
                workspace, language=job["language"], code=job["code"], timeout=job["timeout"]
            )
        except Exception as error:  # the harness reports it; the attempt still counts
            verdict["error"] = f"{type(error).__name__}: {error}"
        settle()
        pid_text = Path(job["pidfile"]).read_text().strip() if Path(job["pidfile"]).exists() else ""
        verdict["alive"] = pid_text.isdigit() and tagged_alive(int(pid_text), job["tag"])
        verdicts.append(verdict)
    print(json.dumps(verdicts))


def via_cli(scratch: Scratch, planned: list[tuple[Planted, str, str]]) -> None:
    for planted, language, code in planned:
        args = ["execute", language, code]
        if planted.mode == "timeout":
            args += ["--timeout", str(CALL_TIMEOUT)]
        outcome = run_process(
            capy_command(*args), env=scratch.env, cwd=scratch.project, deadline=60
        )
        if outcome.hung:
            planted.error = "capy execute did not return within 60 s"
        settle()
        planted.after_call = planted.alive()
        planted.after_exit = planted.after_call  # the CLI process has exited by now


def via_mcp(scratch: Scratch, planned: list[tuple[Planted, str, str]]) -> None:
    import anyio

    anyio.run(_mcp_batch, scratch, planned)
    settle()
    for planted, _, _ in planned:
        planted.after_exit = planted.alive()


async def _mcp_batch(scratch: Scratch, planned: list[tuple[Planted, str, str]]) -> None:
    import anyio

    from capy.bench.hostile_common import mcp_session

    async with mcp_session(scratch) as client:
        for planted, language, code in planned:
            arguments = {"language": language, "code": code}
            if planted.mode == "timeout":
                arguments["timeout"] = CALL_TIMEOUT
            try:
                await client.call_tool("capy_execute", arguments)
            except Exception as error:  # a failed call is reported, the attempt still counts
                planted.error = f"{type(error).__name__}: {error}"
            await anyio.sleep(0.5)
            planted.after_call = planted.alive()


# ---- the family ------------------------------------------------------------------------------


def control_survivor(folder: Path) -> bool:
    """A survivor started outside capy, in a session of its own: the harness must see it."""
    tools = tools_available()
    tag = f"{TAG}-{secrets.token_hex(6)}"
    pidfile = folder / "control.pid"
    planted = Planted("control", "none", "returns", pidfile, tag)
    subprocess.Popen(
        _survivor_argv(tools, "sh", pidfile, tag),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + PID_WAIT
    while planted.pid() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = planted.alive()
    kill_survivor(planted)
    return seen


def pid_folder(scratch: Scratch) -> Path:
    """Where survivors write their pids: in the home folder, which every call (whatever its
    project) shares with capy; a call's own temp folders are out of capy's sight, and gone
    with the call."""
    return scratch.home / "escape"


def run(scratch: Scratch, *, quick: bool, selection: Selection | None = None) -> dict:
    folder = pid_folder(scratch)
    folder.mkdir()
    runs: Selection = selection or [
        ("library", "returns", ATTEMPTS),
        ("library", "timeout", leaving_session() if quick else ATTEMPTS),
        ("cli", "returns", shedding_marker() if quick else ATTEMPTS),
        ("mcp", "returns", ATTEMPTS),
    ]
    if not quick and selection is None:
        runs += [("cli", "timeout", ATTEMPTS), ("mcp", "timeout", ATTEMPTS)]
    if selection is None:
        runs += [("mcp", mode, ended_early_attempts()) for mode in ENDED_EARLY_MODES]
    launched: list[Planted] = []
    ended_early: dict[str, list] = {}
    lanes: dict[str, list] = {}  # path -> [(runner, planned)], run in order within a lane
    runners = {"library": via_library, "cli": via_cli, "mcp": via_mcp}
    for path, mode, attempts in runs:
        planned = plan(folder, path, mode, attempts)
        launched.extend(p for p, _, _ in planned)
        if path == "mcp" and mode in ENDED_EARLY_MODES:
            ended_early[mode] = planned
        else:
            lanes.setdefault(path, []).append((runners[path], planned))
    if ended_early:
        from capy.bench import hostile_cancel

        lanes["mcp ended early"] = [(hostile_cancel.run, ended_early)]
    try:
        # The paths share nothing but the tag scheme, and most of an attempt is waiting (a
        # pid file, a timeout, a settle): one lane per path, at once, one process each.
        with ThreadPoolExecutor(max_workers=max(1, len(lanes))) as pool:
            futures = [pool.submit(_run_lane, scratch, lane) for lane in lanes.values()]
            for future in futures:
                future.result()
        control = control_survivor(folder)
    finally:
        for planted in launched:
            kill_survivor(planted)
    return _report(launched, control)


def _run_lane(scratch: Scratch, lane: list) -> None:
    for runner, planned in lane:
        runner(scratch, planned)


def _report(launched: list[Planted], control: bool) -> dict:
    rows: dict[tuple[str, str], dict] = {}
    for planted in launched:
        row = rows.setdefault(
            (planted.path, planted.mode),
            {
                "path": planted.path,
                "mode": planted.mode,
                "tried": 0,
                "survived_call": 0,
                "survived_exit": 0,
                "never_started": 0,
                "survivors": [],
            },
        )
        row["tried"] += 1
        row["never_started"] += planted.pid() is None
        row["survived_call"] += bool(planted.after_call)
        row["survived_exit"] += bool(planted.after_exit)
        if planted.after_call or planted.after_exit:
            row["survivors"].append(planted.attempt)
    tried = sum(row["tried"] for row in rows.values())
    survived = sum(bool(planted.after_call or planted.after_exit) for planted in launched)
    return {
        "tried": tried,
        "survived": survived,
        "never_started": sum(planted.pid() is None for planted in launched),
        "rows": list(rows.values()),
        "errors": sorted({p.error for p in launched if p.error}),
        "control_seen": control,
        "skipped": [] if which("perl") else ["perl attempts: no perl on PATH"],
    }
