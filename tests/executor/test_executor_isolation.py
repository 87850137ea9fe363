"""No call reaches another process of the same user: not capy, not another running call.

Each call runs in its own PID and mount namespaces (`capy.executor.isolation`). Before that,
code in a call could read this process's environment and memory, trace it, write into a
running call's output pipes through /proc, and rewrite live cgroup limits: every test here
got through on that code. The same holds for a call made through a server's ready spawner,
and for a user who is not root (the tests run as root; that case runs as uid 65534).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from capy.executor import cgroups, execute, isolation, janitor, prejoin, processes
from capy.executor.errors import ExecutorError
from tests.executor.test_executor_prejoin import _took_the_ready_spawner, _warm_up

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

# Tries every way into process `pid`; prints what got in.
REACH = r"""
import ctypes, json, os, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
got = []
for name in ("environ", "mem", "maps", "fd/1"):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            handle.read(1)
        got.append(name)
    except OSError:
        pass
if libc.ptrace(0x4206, pid, None, None) == 0:  # PTRACE_SEIZE
    got.append("ptrace")
try:
    os.kill(pid, 0)
    got.append("signal")
except OSError:
    pass
print(json.dumps(got))
"""


@pytest.fixture
def isolated(view):
    if isolation.plan(view.isolation) is None:
        pytest.skip(f"calls are not isolated here: {isolation.unavailable_reason(view.isolation)}")


def _reach(view, pid: int) -> list[str]:
    code = f"import sys\nsys.argv = ['reach', '{pid}']\n" + REACH
    result = execute("python", code, rules=view, timeout=30)
    assert result.exit_code == 0, result
    return json.loads(result.output)


def test_a_call_cannot_reach_the_process_that_runs_it(isolated, view) -> None:
    """capy itself: its memory holds the database keys, its environment may too."""
    assert _reach(view, os.getpid()) == []


def test_a_call_sees_only_its_own_processes(isolated, view) -> None:
    result = execute(
        "shell",
        f"ls /proc | grep -c '^[0-9]'; test -e /proc/{os.getpid()} && echo seen; true",
        rules=view,
    )
    assert result.exit_code == 0, result
    assert "seen" not in result.output
    assert int(result.output.split()[0]) <= 6, result.output  # its shell, script, ls, grep


def test_a_call_cannot_reach_another_running_call(isolated, view) -> None:
    """The victim's pipes hold its output: a write through /proc/<pid>/fd/1 would land in it."""
    replies: list = []
    victim = threading.Thread(
        target=lambda: replies.append(execute("shell", "sleep 3; echo victim-done", rules=view))
    )
    victim.start()
    pids: list[int] = []
    deadline = time.monotonic() + 20
    while not pids and time.monotonic() < deadline:
        with processes.spawn_lock:
            calls = list(processes._live_calls)
        pids = sorted(pid for call in calls for pid in call.members())
        time.sleep(0.02)
    assert pids, "the victim call never started"
    for pid in pids:
        assert _reach(view, pid) == [], pid
    victim.join()
    assert replies[0].output == "victim-done\n", replies[0]


def test_a_call_cannot_rewrite_a_live_cgroup_limit(isolated, view) -> None:
    """The call's own group's cap, the one most worth raising; other groups sit beside it."""
    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine")
    homes = " ".join(str(hierarchy.home) for hierarchy in cgroups.hierarchies())
    code = (
        f"for home in {homes}; do for file in $home/*/pids.max $home/*/cgroup.procs; do "
        '[ -e "$file" ] && echo "seen $file"; '
        '{ value=$(cat "$file") && echo "$value" > "$file"; } 2>/dev/null && echo "wrote $file"; '
        "done; done; ls /sys/fs/cgroup | wc -l"
    )
    result = execute("shell", code, rules=view)
    assert "seen" not in result.output and "wrote" not in result.output, result.output
    assert result.output.split()[-1] == "0"


def test_a_call_keeps_no_capability_to_undo_its_mounts(isolated, view) -> None:
    """Unmounting its /proc would show the machine's: refused, also from a new user namespace."""
    code = (
        "umount /proc 2>/dev/null && echo unmounted; "
        "unshare --user --map-root-user --mount sh -c 'umount /proc && echo nested' 2>/dev/null; "
        "{ echo x > /proc/sys/kernel/core_pattern; } 2>/dev/null && echo wrote-sysctl; "
        f"test -e /proc/{os.getpid()} && echo seen; echo done"
    )
    result = execute("shell", code, rules=view)
    assert result.output.strip() == "done", result.output


def test_a_signal_still_ends_the_program_and_its_status_comes_back(isolated, view) -> None:
    """The program is not PID 1 (which ignores signals it has no handler for), and the shell
    that is adds nothing to the output."""
    result = execute("shell", "echo before; kill -TERM $$; echo after", rules=view)
    assert (result.exit_code, result.output) == (143, "before\n")
    result = execute("python", "import os\nprint(os.getppid())", rules=view)
    assert result.output == "1\n"


# Reads every file under each folder given; prints what it could read.
READ_FOLDERS = r"""
import json, os, sys
got = []
for folder in sys.argv[1:]:
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                with open(os.path.join(root, name), "rb") as handle:
                    handle.read(16)
                got.append(name)
            except OSError:
                pass
print(json.dumps(got))
"""


def _readable(view, folders: list[Path]) -> list[str]:
    code = f"import sys\nsys.argv = ['read', *{[str(f) for f in folders]!r}]\n" + READ_FOLDERS
    result = execute("python", code, rules=view, timeout=30)
    assert result.exit_code == 0, result
    return json.loads(result.output)


def test_a_call_cannot_read_capys_key_files_or_stores(isolated, view, monkeypatch, tmp_path):
    """A call runs as capy's user: without its own mounts it could read the generated key
    and the encrypted store beside it, and so open the store. Folders come from the settings
    (here a key folder configured apart, with a blank in its name)."""
    from capy.config.paths import config_dir, data_dir
    from capy.store.keys import key_file_path, load_or_create_key_file

    key_dir = tmp_path / "capy keys"
    monkeypatch.setenv("CAPY_KEY_DIR", str(key_dir))
    load_or_create_key_file(key_file_path(key_dir, "db"))
    store = data_dir() / "project" / "knowledge.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"SQLite format 3\0")
    (config_dir()).mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('db_key = "x"\n')
    folders = [key_dir, data_dir(), config_dir()]
    assert _readable(view, folders) == []
    # Not a folder beside them: the call still sees the rest of the user's files (its
    # working folder, here under the temp folder, is bound into its own).
    (Path.cwd() / "notes.txt").write_text("kept in sight")
    assert "notes.txt" in _readable(view, [Path.cwd()])


def test_capy_inside_a_call_says_its_stores_are_out_of_reach(monkeypatch, tmp_path) -> None:
    """`capy` run by a call finds capy's folders empty and read-only: one sentence says why."""
    from capy.executor.processes import MARKER_ENV
    from capy.store.failures import explain_failure

    monkeypatch.setenv(MARKER_ENV, "a-call")
    denied = OSError(30, "Read-only file system", str(tmp_path / ".db.key.tmp"))
    error = explain_failure(denied, tmp_path / "knowledge.db")
    assert error is not None
    assert "hidden from code that runs inside a capy sandbox call" in str(error)


@pytest.fixture
def ready():
    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine, so nothing to join ahead")
    prejoin.keep_ready()
    yield
    prejoin.stop()


def test_a_call_through_the_ready_spawner_is_isolated_too(
    isolated, ready, view, monkeypatch
) -> None:
    _warm_up(view)
    taken = _took_the_ready_spawner(monkeypatch)
    assert _reach(view, os.getpid()) == []
    assert taken == [True]
    janitor.wait_for_cleanup()


def test_a_pack_that_requires_isolation_refuses_where_there_is_none(view) -> None:
    """Fail closed: a mount the kernel refuses (a tmpfs of no size) leaves no way to isolate,
    and a pack that requires isolation then runs nothing."""
    broken = view.isolation.mounts[-1].model_copy(update={"options": "size=nonsense"})
    strict = view.isolation.model_copy(update={"required": True, "mounts": (broken,)})
    with pytest.raises(ExecutorError, match="requires each call to run isolated"):
        isolation.plan(strict)
    lenient = strict.model_copy(update={"required": False})
    assert isolation.plan(lenient) is None
    assert isolation.unavailable_reason(lenient)


def test_a_user_who_is_not_root_gets_isolated_calls(tmp_path: Path) -> None:
    """uid 65534 in a real subprocess: the user-namespace variant, the call under its own id."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start a process as another user")
    home = Path(tempfile.mkdtemp(prefix="capy-nobody-", dir="/tmp"))  # that user reaches it
    os.chown(home, 65534, 65534)
    try:
        _as_nobody(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _as_nobody(home: Path) -> None:
    script = (
        "import json, os\n"
        "from capy.executor import execute, isolation\n"
        "from capy.rules import build_ruleset\n"
        "view = build_ruleset(include_shipped=True).view('executor')\n"
        "plan = isolation.plan(view.isolation)\n"
        "code = f'id -u; test -e /proc/{os.getpid()} && echo seen; umount /proc 2>/dev/null "
        "&& echo unmounted; ls -d /tmp/capy-call; echo done'\n"
        "result = execute('shell', code, rules=view, cwd=os.environ['HOME'])\n"
        "print(json.dumps([plan is not None, isolation.unavailable_reason(view.isolation), "
        "result.output, isolation.temp_mode(view.isolation)]))\n"
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(home),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    isolated_here, reason, output, temp_mode = json.loads(done.stdout.splitlines()[-1])
    if not isolated_here:
        pytest.skip(f"no unprivileged user namespaces here: {reason}")
    assert output == "65534\n/tmp/capy-call\ndone\n"  # its own /tmp, with its folder
    assert temp_mode in ("overlay", "empty")  # overlay where the kernel allows it unprivileged


def test_a_capy_folder_inside_another_is_hidden_by_the_outer_mount(
    isolated, view, monkeypatch
) -> None:
    """The data folder configured inside the config folder: its target is gone on the outer
    empty mount, and mounting it there failed every trial, so calls ran with no namespaces."""
    from capy.config.paths import config_dir

    data = config_dir() / "data"
    monkeypatch.setenv("CAPY_DATA_DIR", str(data))
    data.mkdir(parents=True)
    (data / "knowledge.db").write_bytes(b"SQLite format 3\0")
    assert isolation.plan(view.isolation) is not None
    assert _readable(view, [data, config_dir()]) == []
    # Key folder around the config folder: the same, the other way round.
    monkeypatch.setenv("CAPY_KEY_DIR", str(config_dir().parent))
    assert isolation.plan(view.isolation) is not None
    assert _readable(view, [data]) == []


def test_a_capy_folder_that_cannot_be_hidden_refuses_every_call(isolated, view) -> None:
    """Isolation works but the empty mount over the data folder fails: no call runs, even
    where isolation is not required, and the sentence names the folder (not the kernel)."""
    mounts = tuple(
        mount.model_copy(update={"options": "size=nonsense"})
        if mount.target == "{data_dir}"
        else mount
        for mount in view.isolation.mounts
    )
    lenient = view.isolation.model_copy(update={"required": False, "mounts": mounts})
    data = os.path.realpath(os.environ["XDG_DATA_HOME"])
    with pytest.raises(ExecutorError, match=f"could not hide its folder {data}"):
        isolation.plan(lenient)
    assert "could not be hidden" in isolation.unavailable_reason(lenient)


def test_a_capy_folder_holding_the_working_folder_is_reported_in_sight(
    isolated, view, monkeypatch, tmp_path
) -> None:
    """Reached through a symlink, the data folder holds the working folder: it stays in sight,
    and a pack that requires isolation refuses rather than run in sight of it."""
    real = tmp_path / "real data"
    (real / "work").mkdir(parents=True)
    link = tmp_path / "data link"
    link.symlink_to(real)
    monkeypatch.setenv("CAPY_DATA_DIR", str(link))
    monkeypatch.chdir(real / "work")
    assert isolation.plan(view.isolation) is not None
    assert any("holds the working folder" in gap for gap in isolation.in_sight(view.isolation))
    strict = view.isolation.model_copy(update={"required": True})
    with pytest.raises(ExecutorError, match=f"data dir {real} stays in sight"):
        isolation.plan(strict)


def test_a_broken_config_still_hides_the_folders_its_variables_name(
    isolated, view, monkeypatch, tmp_path
) -> None:
    from capy.config.paths import user_config_file

    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text("this is = = not toml\n")
    data = tmp_path / "moved data"
    monkeypatch.setenv("CAPY_DATA_DIR", str(data))
    data.mkdir()
    (data / "knowledge.db").write_bytes(b"SQLite format 3\0")
    assert isolation.plan(view.isolation) is not None
    assert _readable(view, [data]) == []
    strict = view.isolation.model_copy(update={"required": True})
    with pytest.raises(ExecutorError, match="settings could not be read"):
        isolation.plan(strict)


def test_a_capy_folder_whose_name_is_not_utf8_is_hidden(isolated, view, monkeypatch, tmp_path):
    data = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")
    monkeypatch.setenv("CAPY_DATA_DIR", data)
    assert isolation.plan(view.isolation) is not None
    assert execute("shell", "true", rules=view, timeout=30).ok


def test_a_ready_spawner_made_before_the_folders_moved_is_not_taken(
    isolated, view, monkeypatch, tmp_path
) -> None:
    """A spawner's mounts are fixed when it starts: its key names the mounts it made."""
    from capy.executor.phase import spawn_key

    before = spawn_key(view.limits, view.isolation, False)
    monkeypatch.setenv("CAPY_DATA_DIR", str(tmp_path / "moved"))
    assert spawn_key(view.limits, view.isolation, False) != before


def test_a_call_through_the_ready_spawner_runs_even_if_the_next_fails_to_start(
    isolated, ready, view, monkeypatch
) -> None:
    _warm_up(view)
    taken = _took_the_ready_spawner(monkeypatch)

    def broken(key) -> None:
        raise RuntimeError("no spawner today")

    monkeypatch.setattr(prejoin, "refill", broken)
    result = execute("shell", "echo ran", rules=view, timeout=30)
    assert taken == [True]
    assert result.exit_code == 0 and result.output.strip() == "ran", result
    janitor.wait_for_cleanup()


def test_a_store_file_configured_outside_the_data_folder_is_named_as_in_sight(
    isolated, view, monkeypatch, tmp_path
) -> None:
    """Its key stays hidden, the encrypted file does not: the doctor's words say so."""
    monkeypatch.setenv("CAPY_DB_PATH", str(tmp_path / "elsewhere" / "knowledge.db"))
    gaps = isolation.in_sight(view.isolation)
    assert any("`db_path`" in gap and "stays encrypted" in gap for gap in gaps), gaps
    monkeypatch.delenv("CAPY_DB_PATH")
    assert isolation.in_sight(view.isolation) == ()


def test_a_call_that_moves_a_hidden_folders_parent_leaves_every_later_call_refused(
    isolated, view, monkeypatch, tmp_path
) -> None:
    """A call cannot rename a mount point, but it can rename its parent and leave an empty
    decoy at the old path: the next call would then hide the decoy, and read the real key at
    its new path. capy sees the folder is not the one it hid, and runs nothing. (The folder
    lies in the working folder: one under the temp folder is out of every call's sight.)"""
    from capy.store.keys import key_file_path, load_or_create_key_file

    parent = Path.cwd() / "config"
    key_dir = parent / "capy"
    monkeypatch.setenv("CAPY_KEY_DIR", str(key_dir))
    load_or_create_key_file(key_file_path(key_dir, "db"))
    assert _readable(view, [key_dir]) == []
    moved = f"mv '{parent}' '{parent}-moved' && mkdir -p '{key_dir}'"
    assert execute("shell", moved, rules=view, timeout=30).ok
    with pytest.raises(ExecutorError, match=f"{parent} was moved or replaced"):
        _readable(view, [Path(f"{parent}-moved")])
    shutil.rmtree(parent)
    Path(f"{parent}-moved").rename(parent)
    with pytest.raises(
        ExecutorError, match="restart capy"
    ):  # spawners made meanwhile hid the decoy
        execute("shell", "true", rules=view, timeout=30)


def test_no_ready_spawner_starts_once_a_hidden_folder_moved(
    isolated, ready, view, monkeypatch, tmp_path
) -> None:
    """A spawner mounts by path when it starts: after the move it would hide the decoy."""
    from capy.executor.phase import spawn_key

    parent = tmp_path / "config"
    monkeypatch.setenv("CAPY_KEY_DIR", str(parent / "capy"))
    _warm_up(view)
    key = spawn_key(view.limits, view.isolation, False)
    prejoin.stop()
    prejoin.keep_ready()
    parent.rename(f"{parent}-moved")
    (parent / "capy").mkdir(parents=True)
    prejoin.refill(key)
    prejoin.settle()
    assert prejoin._ready == []
