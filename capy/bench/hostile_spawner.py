"""Spawner injection: code in one call tries to get a line into a pre-joined spawner.

A capy server keeps the next call's first process ready (`capy.executor.prejoin`), waiting for
its command. Any process of the same user may open another's descriptors through
`/proc/<pid>/fd/N`, so the attacker, sandboxed code run by one real `capy serve`, hunts every
process waiting on a pipe or socket under any capy server (its own server's, and another
server's of the same user) and tries three channels: a command line written (or sent, by
connecting) to its stdin, bytes written to its output pipes (they would come back as the next
call's output), and a rewrite of a call's command in flight (memfds among the server's own
descriptors; output only in the attack's second half, since a spawner whose pipes hold
anything is ended rather than taken, and the first half must let calls take one). Meanwhile a
second server, the victim, runs calls. A scenario (channel x whose
spawner) is bad when the victim's or the attacker's own next call ran the injected line or
returned the injected bytes.

The control is a spawner of the old kind (a shell sourcing its stdin pipe) kept by this
harness: the same attacker, run as a plain process of the same user (from inside a call it
sees no process but the call's own, see `capy.executor.isolation`), must get a line into it,
or the harness is blind.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from capy.bench.hostile_common import Scratch, last_json, mcp_session, reply_text

if TYPE_CHECKING:
    from capy.bench.report import Table

CHANNELS = ("command", "output", "sealed")
WHOSE = ("other", "own")  # another server's spawner; the attacker's own server's next one
ATTACK_SECONDS = 4.0
VICTIM_CALLS = 8
INJECTED = "INJECTED-OUTPUT"

# The attacker: every child of a capy server (or of an extra parent given) whose stdin is a
# pipe or a socket is a spawner waiting for its command. Prints what it could open.
ATTACKER = r"""
import json, os, socket, sys, time
OUT, SECONDS, PROJECT, EXTRA, INJECTED = sys.argv[1:6]
SECONDS, PROJECT = float(SECONDS), PROJECT.encode()
EXTRA = {int(pid) for pid in EXTRA.split(",") if pid}

def read(path, mode="rb"):
    try:
        with open(path, mode) as handle:
            return handle.read()
    except OSError:
        return None

def parent(pid):
    for line in (read(f"/proc/{pid}/status", "r") or "").splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return 0

def link(path):
    try:
        return os.readlink(path)
    except OSError:
        return ""

ancestors, pid = set(), os.getpid()
while pid > 1:
    ancestors.add(pid)
    pid = parent(pid)

def servers():
    found = set(EXTRA)
    for entry in filter(str.isdigit, os.listdir("/proc")):
        line = read(f"/proc/{entry}/cmdline") or b""
        if PROJECT and b"serve" in line and PROJECT in line:
            found.add(int(entry))
    return found

tried, opened = {}, {}

def attempt(channel, whose, write):
    key = f"{channel}-{whose}"
    tried[key] = tried.get(key, 0) + 1
    try:
        write()
    except OSError:
        return
    opened[key] = opened.get(key, 0) + 1

def to_path(path, data):
    def write():
        with open(path, "r+b" if "memfd" in link(path) else "wb", buffering=0) as handle:
            handle.write(data)
    return write

def to_socket(path, data):
    def write():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.connect(path)
            peer.sendall(data)
    return write

end = time.monotonic() + SECONDS
halfway = end - SECONDS / 2
while time.monotonic() < end:
    found = servers()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        pid = int(entry)
        owner = parent(pid)
        if owner not in found or pid in ancestors:
            continue
        stdin = link(f"/proc/{pid}/fd/0")
        if not stdin.startswith(("pipe:", "socket:")):
            continue  # a call's process (stdin /dev/null), not a waiting spawner
        whose = "given" if owner in EXTRA else "own" if owner in ancestors else "other"
        line = f"touch {OUT}/command-{whose}\n".encode()
        attempt("command", whose, to_path(f"/proc/{pid}/fd/0", line))
        attempt("command", whose, to_socket(f"/proc/{pid}/fd/0", line))
        if time.monotonic() < halfway:
            continue  # output only in the second half: a spawner it fed is ended, not taken
        for fd in (1, 2):
            attempt("output", whose, to_path(f"/proc/{pid}/fd/{fd}", f"{INJECTED}\n".encode()))
    for server in found:
        whose = "given" if server in EXTRA else "own" if server in ancestors else "other"
        try:
            descriptors = os.listdir(f"/proc/{server}/fd")
        except OSError:
            continue
        for fd in descriptors:
            path = f"/proc/{server}/fd/{fd}"
            if link(path).startswith("/memfd:capy"):
                attempt("sealed", whose, to_path(path, f"touch {OUT}/sealed-{whose}\n".encode()))
    time.sleep(0.005)
print(json.dumps({"tried": tried, "opened": opened}))
"""

# A spawner of the old kind, for the control: a shell that sources whatever its pipe brings.
OLD_SPAWNER = ". /dev/stdin; exit 126"
_CONTROL_PARENT = (
    "import subprocess, sys; sys.exit(subprocess.call(['/bin/sh', '-c', sys.argv[1]]))"
)


def attacker_argv(
    out: Path, seconds: float, *, project: Path | None = None, parents: tuple[int, ...] = ()
) -> list[str]:
    """The attacker as a plain process (the tests run it outside any call): it hunts the
    spawners of the capy servers serving `project` and those of the `parents` given (only
    theirs: other capy servers on the machine are left alone)."""
    given = ",".join(str(pid) for pid in parents)
    where = str(project) if project is not None else ""
    return [sys.executable, "-c", ATTACKER, str(out), str(seconds), where, given, INJECTED]


def run(scratch: Scratch, *, quick: bool) -> dict:
    import anyio

    out = scratch.root / "spawner"
    out.mkdir()
    return anyio.run(_attack, scratch, out)


async def _attack(scratch: Scratch, out: Path) -> dict:
    import anyio

    # The control's parent holds nothing else the attacker may touch (this harness's children
    # include the servers, whose stdio pipes are their MCP channel).
    control = subprocess.Popen(
        [sys.executable, "-c", _CONTROL_PARENT, OLD_SPAWNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    code = attacker_code(out, ATTACK_SECONDS, project=scratch.project)
    outputs: dict[str, list[str]] = {"own": [], "other": []}
    opened: dict = {}
    errors: list[str] = []
    try:
        async with mcp_session(scratch) as victim, mcp_session(scratch) as attacker:
            for client in (victim, attacker):  # each server now keeps a spawner ready
                await client.call_tool("capy_execute", {"language": "shell", "code": "true"})
            await anyio.sleep(1.0)

            async def attack() -> None:
                reply = await attacker.call_tool(
                    "capy_execute",
                    {"language": "python", "code": code, "timeout": ATTACK_SECONDS + 20},
                )
                opened.update(last_json(reply_text(reply), errors))

            async def victim_calls() -> None:
                await anyio.sleep(0.5)
                for index in range(VICTIM_CALLS):
                    reply = await victim.call_tool(
                        "capy_execute",
                        {"language": "shell", "code": f"sleep 0.2; echo next-{index}"},
                    )
                    outputs["other"].append(reply_text(reply))
                    await anyio.sleep(0.25)

            async with anyio.create_task_group() as group:
                group.start_soon(attack)
                group.start_soon(victim_calls)
            for client, whose in ((victim, "other"), (attacker, "own")):
                reply = await client.call_tool(
                    "capy_execute", {"language": "shell", "code": "echo next-after"}
                )
                outputs[whose].append(reply_text(reply))
            await anyio.sleep(0.5)
    except Exception as error:  # the harness reports it; the scenarios then count as unknown
        errors.append(f"{type(error).__name__}: {error}")
    plain = attacker_argv(out, 1.0, parents=(control.pid,))
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(plain, capture_output=True, timeout=60)
    control_seen = _control_seen(control, out)
    return _report(out, outputs, opened, control_seen, errors)


def attacker_code(
    out: Path, seconds: float, *, project: Path | None = None, parents: tuple[int, ...] = ()
) -> str:
    """Python for `capy_execute` that runs the attacker (see `attacker_argv`)."""
    argv = attacker_argv(out, seconds, project=project, parents=parents)[2:]
    return f"import sys\nsys.argv = {argv!r}\nexec(sys.argv[0])\n"


def _control_seen(control: subprocess.Popen, out: Path) -> bool:
    """The old spawner is ended (end-of-file on its pipe): did it run the attacker's line?"""
    try:
        assert control.stdin is not None
        control.stdin.close()
        control.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        control.kill()
        control.wait()
    return (out / "command-given").exists()


def _report(out: Path, outputs: dict, opened: dict, control_seen: bool, errors: list) -> dict:
    rows = []
    for channel in CHANNELS:
        for whose in WHOSE:
            ran = (out / f"{channel}-{whose}").exists()
            shown = channel == "output" and any(INJECTED in text for text in outputs[whose])
            rows.append(
                {
                    "channel": channel,
                    "whose": whose,
                    "attempts": opened.get("tried", {}).get(f"{channel}-{whose}", 0),
                    "opened": opened.get("opened", {}).get(f"{channel}-{whose}", 0),
                    "ran": ran,
                    "shown": shown,
                    "bad": ran or shown,
                }
            )
    wrong = [
        text
        for whose in WHOSE
        for text in outputs[whose]
        if "next-" not in text or INJECTED in text
    ]
    return {
        "tried": len(rows),
        "got_through": sum(row["bad"] for row in rows),
        "rows": rows,
        "victim_calls": len(outputs["other"]),
        "wrong_outputs": wrong[:5],
        "control_seen": control_seen,
        "errors": errors,
    }


def spawner_table(spawner: dict, summary: Table) -> Table:
    """The family's row in the hostile summary, and its own table."""
    from capy.bench.report import Table, fmt

    summary.rows.append(
        (
            "spawner injections tried / got through",
            str(spawner["tried"]),
            str(spawner["got_through"]),
            "0",
        )
    )
    detail = Table(
        "spawner injection (code in one call aims at a pre-joined spawner)",
        ("channel", "whose spawner", "attempts", "opened", "ran", "returned"),
    )
    detail.rows.extend(
        (
            row["channel"],
            row["whose"],
            str(row["attempts"]),
            str(row["opened"]),
            fmt(row["ran"]),
            fmt(row["shown"]),
        )
        for row in spawner["rows"]
    )
    detail.notes.append(
        f"victim calls made during the attack: {spawner['victim_calls']}; "
        "attempts: writes tried at a spawner found waiting, or at a call's command in flight; "
        "opened: those that were written (harm only if it ran or came back)"
    )
    detail.notes.extend(f"wrong output: {text[:120]!r}" for text in spawner["wrong_outputs"])
    detail.notes.extend(spawner["errors"][:5])
    return detail
