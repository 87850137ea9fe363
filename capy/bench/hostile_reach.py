"""Reach: code in one call aims at other processes of the same user.

Two real `capy serve` processes share a project: the victim and the attacker. While the victim
runs a call, the attacker's call is given the pids (as the machine sees them) of both servers
and of the victim's running call, and tries every channel a process of the same user has:
the servers' environments (which hold the database keys), their memory through /proc/<pid>/mem
and process_vm_readv, ptrace, the running call's output pipes through /proc/<pid>/fd, and the
limit files of the servers' live cgroups (rewritten with the value they hold, so nothing
changes but the proof). A scenario (channel x whose server) is bad when the key came back,
ptrace attached, the injected bytes showed up in the victim call's reply, or a limit file
took the write.

Code in a call also runs as capy's user, so the attacker tries capy's files too: the key file
capy generated under the user's config folder (`key-file`), and the encrypted store under its
data folder (`store`, read from its first page: with the key file, that opens the store). Both
belong to the attacker's own server's user, so they count as `own`. Last, `moved-key`: one
call renames the key folder's parent and leaves an empty decoy folder at the old path (a mount
point cannot be renamed, its parent can), and the next calls read the key at its new path.
Then `tmp-script` (see hostile_reach_tmp): a call rewrites the scripts of the other server's
later calls in the temp folder before they run.

The control is the same attacker run as a plain process of the same user, outside capy, which
is what a call was before it had namespaces of its own: it must get through every channel
(for `tmp-script`: calls of servers whose overlay turns their own temp folders off).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from capy.bench.hostile_common import Scratch, last_json, mcp_session, reply_text

if TYPE_CHECKING:
    from capy.bench.report import Table

CHANNELS = (
    "environ",
    "memory",
    "ptrace",
    "pipes",
    "cgroup",
    "key-file",
    "store",
    "moved-key",
    "tmp-script",
)
WHOSE = ("other", "own")
INJECTED = "INJECTED-INTO-A-RUNNING-CALL"
VICTIM_SECONDS = 4.0
MOVED_READS = 9  # past every ready spawner (the schema's ceiling of `ready_spawners` is 8)

# Prints {"channel-whose": "ok" | error} for each try. argv: key, then "whose:pid" servers,
# then "call:pid" processes of the victim's running call, then "key-file:PATH" and
# "store:FOLDER" (capy's key file and data folder).
ATTACKER = r"""
import ctypes, json, os, sys
KEY, INJECTED = sys.argv[1].encode(), sys.argv[2].encode()
targets = [arg.split(":") for arg in sys.argv[3:]]
libc = ctypes.CDLL(None, use_errno=True)
result = {}

def note(key, outcome):
    if result.get(key) != "ok":
        result[key] = outcome

def attempt(key, action):
    try:
        note(key, "ok" if action() else "no")
    except OSError as error:
        note(key, error.strerror or str(error))

def environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as handle:
        return KEY in handle.read()

def regions(pid):
    # The stack: where a process's environment (and so the keys) lives.
    with open(f"/proc/{pid}/maps") as handle:
        for line in handle:
            if line.rstrip().endswith("[stack]"):
                start, end = (int(part, 16) for part in line.split()[0].split("-"))
                yield start, end - start

def memory(pid):
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as handle:
        for start, size in regions(pid):
            try:
                handle.seek(start)
                if KEY in handle.read(size):
                    return True
            except OSError:
                continue
    return False

class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

def ptrace(pid):
    # process_vm_readv and PTRACE_SEIZE both need the right to trace the process.
    buffer = ctypes.create_string_buffer(4096)
    local = IOVec(ctypes.cast(buffer, ctypes.c_void_p), 4096)
    readable = False
    try:
        for start, _ in regions(pid):
            remote = IOVec(start, 4096)
            if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0:
                readable = True
                break
    except OSError:
        pass
    seized = libc.ptrace(0x4206, pid, None, None) == 0  # PTRACE_SEIZE: the tracee keeps running
    if not (readable or seized):
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return True

def pipes(pid):
    with open(f"/proc/{pid}/fd/1", "wb", buffering=0) as handle:
        handle.write(INJECTED + b"\n")
    return True

def cgroup(pid):
    wrote, error = False, OSError(2, "no cgroup of that server found")
    for line in open(f"/proc/{pid}/cgroup").read().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else ["unified"]:
            home = f"/sys/fs/cgroup/{name}{path.rstrip('/')}/capy-{pid}"
            try:
                groups = os.listdir(home)
            except OSError as failure:
                error = failure
                continue
            for group in groups:
                for limit in ("pids.max", "memory.max", "memory.limit_in_bytes"):
                    target = os.path.join(home, group, limit)
                    try:
                        value = open(target).read()
                        with open(target, "w") as handle:  # the value it holds: no harm
                            handle.write(value)
                        wrote = True
                    except OSError as failure:
                        if not isinstance(failure, FileNotFoundError):
                            error = failure
    if not wrote:
        raise error
    return True

def key_file(path):
    with open(path, "rb") as handle:
        return len(handle.read().strip()) == 64  # the 256-bit key, in hex

def store(folder):
    for root, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".db"):
                with open(os.path.join(root, name), "rb") as handle:
                    if handle.read(4096):
                        return True
    raise OSError(2, "no store found under the data folder")

for whose, pid in targets:
    if whose in ("key-file", "store"):
        attempt(f"{whose}-own", lambda: (key_file if whose == "key-file" else store)(pid))
        continue
    pid = int(pid)
    if whose == "call":
        attempt("pipes-other", lambda: pipes(pid))
        continue
    for channel, action in (("environ", environ), ("memory", memory), ("ptrace", ptrace),
                            ("cgroup", cgroup)):
        attempt(f"{channel}-{whose}", lambda: action(pid))
print(json.dumps(result))
"""

# argv "move", PARENT, NAME: renames PARENT aside (to PARENT-moved) and leaves an empty decoy
# folder PARENT/NAME; argv "read", PATH: prints whether the key file at PATH was read.
MOVER = r"""
import json, os, sys
if sys.argv[1] == "move":
    os.rename(sys.argv[2], sys.argv[2] + "-moved")
    os.makedirs(os.path.join(sys.argv[2], sys.argv[3]))
    print(json.dumps({}))
else:
    try:
        with open(sys.argv[2], "rb") as handle:
            print(json.dumps({"moved-key-own": "ok" if len(handle.read().strip()) == 64 else "no"}))
    except OSError as error:
        print(json.dumps({"moved-key-own": error.strerror}))
"""


def run(scratch: Scratch, *, quick: bool) -> dict:
    import anyio

    return anyio.run(_attack, scratch)


async def _attack(scratch: Scratch) -> dict:
    import anyio

    errors: list[str] = []
    found: dict[str, dict] = {}
    victim_replies: dict[str, str] = {}
    try:
        async with mcp_session(scratch) as victim, mcp_session(scratch) as attacker:
            for client in (victim, attacker):
                await client.call_tool("capy_execute", {"language": "shell", "code": "true"})
            await victim.call_tool("capy_index", {"content": "# notes\n\nkept", "source": "n"})
            files = _capy_files(scratch)
            servers = _servers(scratch.project)
            if len(servers) != 2:
                raise RuntimeError(f"expected 2 capy servers, found {len(servers)}")
            for side in ("control", "capy"):
                tag = f"victim-{side}"
                calls: list[int] = []

                async def victim_call(tag: str = tag) -> None:
                    code = f"sleep {VICTIM_SECONDS}; echo {tag}-done"
                    reply = await victim.call_tool(
                        "capy_execute", {"language": "shell", "code": code}
                    )
                    victim_replies[tag] = reply_text(reply)

                async with anyio.create_task_group() as group:
                    group.start_soon(victim_call)
                    for _ in range(200):
                        await anyio.sleep(0.02)
                        calls = _running_call(servers)
                        if calls:
                            break
                    argv = _targets(scratch.db_key, own=servers[1], other=servers[0], calls=calls)
                    argv += files
                    if side == "control":
                        found[side] = _run_plain(argv, errors)
                    else:
                        code = f"import sys\nsys.argv = {['attacker', *argv]!r}\n" + ATTACKER
                        reply = await attacker.call_tool(
                            "capy_execute", {"language": "python", "code": code, "timeout": 30}
                        )
                        found[side] = last_json(reply_text(reply), errors)
            key_file = Path(files[0].split(":", 1)[1])
            found.setdefault("control", {}).update(await _moved_key(key_file, _plain_mover(errors)))
            found.setdefault("capy", {}).update(await _moved_key(key_file, _call_mover(attacker)))
    except Exception as error:  # the harness reports it; the scenarios then count as unknown
        errors.append(f"{type(error).__name__}: {error}")
    from capy.bench import hostile_reach_tmp

    through_tmp, shown = await hostile_reach_tmp.attack(scratch, errors)
    for side, attempts in through_tmp.items():
        found.setdefault(side, {}).update(attempts)
    victim_replies.update(shown)
    return _report(found, victim_replies, errors)


async def _moved_key(key_file: Path, mover) -> dict:
    """The `moved-key` try: one run of MOVER moves the key folder's parent aside, the next
    reads the key there; the folder is put back after (the servers stay refusing)."""
    import shutil

    folder, parent = key_file.parent, key_file.parent.parent
    aside = parent.with_name(parent.name + "-moved")
    try:
        await mover(["move", str(parent), folder.name])
        # Until one reads it: ready spawners started before the move hide the folder where it
        # went (their mounts follow it); those started after it mount over the decoy.
        read, found = ["read", str(aside / folder.name / key_file.name)], {}
        for _ in range(MOVED_READS):
            found = await mover(read)
            if found.get("moved-key-own") == "ok":
                break
        return found
    finally:
        if aside.is_dir():
            shutil.rmtree(parent, ignore_errors=True)
            aside.rename(parent)


def _plain_mover(errors: list[str]):
    async def mover(argv: list[str]) -> dict:
        return _run_plain(argv, errors, code=MOVER)

    return mover


def _call_mover(client):
    async def mover(argv: list[str]) -> dict:
        code = f"import sys\nsys.argv = {['mover', *argv]!r}\n" + MOVER
        reply = reply_text(
            await client.call_tool("capy_execute", {"language": "python", "code": code})
        )
        if not any(line.startswith("{") for line in reply.splitlines()):
            return {"moved-key-own": "refused"}  # capy runs no call: what it said is the proof
        return last_json(reply, [])

    return mover


def _capy_files(scratch: Scratch) -> list[str]:
    """The key file a user without a key in the environment has (made here as capy makes it
    on first use: this harness's servers take theirs from the environment) and the data folder
    holding the victim's store."""
    from capy.config.paths import config_dir, data_dir
    from capy.store.keys import key_file_path, load_or_create_key_file
    from capy.store.location import KNOWLEDGE_KEY_NAME

    key_file = key_file_path(config_dir(scratch.env), KNOWLEDGE_KEY_NAME)
    load_or_create_key_file(key_file)
    return [f"key-file:{key_file}", f"store:{data_dir(scratch.env)}"]


def _servers(project: Path) -> list[int]:
    """The pids of the capy servers serving this project, oldest first (the victim's first)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        line = _cmdline(int(entry))
        if b"serve" in line and str(project).encode() in line and b"capy" in line:
            found.append(int(entry))
    return sorted(found, key=_start_ticks)


def _start_ticks(pid: int) -> int:
    from capy.executor.processes import proc_info

    info = proc_info(pid)
    return info.start_ticks if info else 0


def _running_call(servers: list[int]) -> list[int]:
    """Every process of the victim server's running call, once its `sleep` has started."""
    from capy.executor.processes import children_of

    found, roots = [], list(children_of(servers[0]))
    while roots:
        pid = roots.pop()
        roots.extend(children_of(pid))
        found.append(pid)
    sleeping = any(_cmdline(pid).startswith(b"sleep") for pid in found)
    return found if sleeping else []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _targets(key: str, *, own: int, other: int, calls: list[int]) -> list[str]:
    return [key, INJECTED, f"own:{own}", f"other:{other}", *(f"call:{pid}" for pid in calls)]


def _run_plain(argv: list[str], errors: list[str], code: str = ATTACKER) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60
    )
    return last_json(done.stdout, errors)


def _report(found: dict, replies: dict, errors: list) -> dict:
    rows, control_rows = [], []
    for side, sink in (("capy", rows), ("control", control_rows)):
        attempts = found.get(side, {})
        for channel in CHANNELS:
            for whose in WHOSE:
                key = f"{channel}-{whose}"
                if key not in attempts:
                    continue
                shown = INJECTED in replies.get(f"victim-{side}", "")
                bad = shown if channel == "pipes" else attempts[key] == "ok"
                sink.append(
                    {"channel": channel, "whose": whose, "outcome": attempts[key], "bad": bad}
                )
    return {
        "tried": len(rows),
        "got_through": sum(row["bad"] for row in rows),
        "rows": rows,
        "control_rows": control_rows,
        "control_seen": bool(control_rows) and all(row["bad"] for row in control_rows),
        "victim_replies": {tag: text[-200:] for tag, text in replies.items()},
        "errors": errors,
    }


def reach_table(reach: dict, summary: Table) -> Table:
    """The family's row in the hostile summary, and its own table."""
    from capy.bench.report import Table, fmt

    summary.rows.append(
        (
            "reach into other processes tried / got through",
            str(reach["tried"]),
            str(reach["got_through"]),
            "0",
        )
    )
    detail = Table(
        "reach (code in one call aims at the servers and another running call)",
        ("channel", "whose", "capy call", "got through", "plain process (control)"),
    )
    control = {(row["channel"], row["whose"]): row for row in reach["control_rows"]}
    for row in reach["rows"]:
        plain = control.get((row["channel"], row["whose"]))
        detail.rows.append(
            (
                row["channel"],
                row["whose"],
                row["outcome"],
                fmt(row["bad"]),
                "-" if plain is None else f"{plain['outcome']} ({fmt(plain['bad'])})",
            )
        )
    detail.notes.append(
        "whose: the attacker's own server or the other one (for pipes: the other server's "
        "running call); control: the same attacker as a plain process of the same user"
    )
    detail.notes.extend(reach["errors"][:5])
    return detail
