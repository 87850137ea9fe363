"""Each isolated call has its own temp folders, and no call reaches another call's script.

Calls used to share the machine's /tmp, where capy made each call's folder before the call
ran its script: a running call could rewrite a later call's script there (so an offline
call's code ran inside a later networked one), and read or change any temp file another call
left. Every test here got through on that code (see `capy.executor.private`).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import threading
import time
from pathlib import Path

import pytest

from capy.bench.hostile_reach_tmp import MARKER, REWRITER, VICTIM_CODE, VICTIM_WORD
from capy.executor import execute, execute_file, isolation, janitor, prejoin
from capy.executor.errors import ExecutorError
from tests.executor.test_executor_isolation import ready  # noqa: F401 (a fixture)
from tests.executor.test_executor_prejoin import _warm_up

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

ATTACK_SECONDS = 6.0
VICTIMS = 8


@pytest.fixture
def isolated(view):
    if isolation.plan(view.isolation) is None:
        pytest.skip(f"calls are not isolated here: {isolation.unavailable_reason(view.isolation)}")


def _rewriter(view, found: dict) -> threading.Thread:
    """A call rewriting every other call's script it can find, for ATTACK_SECONDS."""
    argv = ["rewriter", str(ATTACK_SECONDS), f'print("{MARKER}")\n', VICTIM_WORD]
    code = f"import sys\nsys.argv = {argv!r}\n" + REWRITER

    def attack() -> None:
        result = execute("python", code, rules=view, timeout=60)
        found.update(json.loads(result.output.splitlines()[-1]))

    thread = threading.Thread(target=attack)
    thread.start()
    return thread


def _race(view) -> tuple[dict, list[str]]:
    found: dict = {}
    attacker = _rewriter(view, found)
    time.sleep(1.0)  # the attacker is polling by now
    outputs = []
    for _ in range(VICTIMS):
        outputs.append(execute("python", VICTIM_CODE, rules=view, timeout=30).output)
        time.sleep(0.1)
    attacker.join(60)
    return found, outputs


def _in_sight(view) -> None:
    """No call's folder is in sight: capy makes them in its hidden data folder, and in the
    machine's /tmp only where calls get it empty (other programs' calls may sit in the /tmp
    that an overlay shows, so the attacker's count of what it found proves nothing there)."""
    root = isolation.calls_root(view.isolation)
    assert root is not None  # in capy's data folder, under /tmp too where a test's home is
    listed = execute("shell", f"ls -A {root} 2>&1; ls -d /tmp/capy-call", rules=view)
    assert listed.output.splitlines()[-1] == "/tmp/capy-call"
    assert "capy-exec-" not in listed.output  # the data folder is covered in every call


# What the attacker counts as rewritten proves nothing here: tests running beside this one
# make call folders in the machine's /tmp (empty mode, unisolated calls, the bench's control),
# which the overlay shows, and the attacker's writes to them land in its own layer. What holds
# is that every victim ran its own code and no victim's folder is in sight.
def test_a_running_call_cannot_rewrite_a_later_calls_script(isolated, view) -> None:
    _found, outputs = _race(view)
    assert outputs == [f"{VICTIM_WORD}\n"] * VICTIMS  # each ran its own code
    _in_sight(view)


def test_nor_the_script_of_a_call_through_the_ready_spawner(isolated, ready, view) -> None:  # noqa: F811
    _warm_up(view)
    _found, outputs = _race(view)
    assert outputs == [f"{VICTIM_WORD}\n"] * VICTIMS  # each ran its own code
    _in_sight(view)


def _empty(view):
    """The view with `private_tmp.mode: empty` (each call's temp folders start empty)."""
    own = view.isolation.private_tmp.model_copy(update={"mode": "empty"})
    return view.model_copy(
        update={"isolation": view.isolation.model_copy(update={"private_tmp": own})}
    )


@pytest.fixture
def host_files():
    """Files the machine has in /tmp and /var/tmp (made by the agent, say), removed after."""
    tag = secrets.token_hex(6)
    made = []
    for folder in ("/tmp", "/var/tmp"):
        if os.path.isdir(folder) and os.access(folder, os.W_OK):
            path = Path(folder) / f"capy-test-host-{tag}.json"
            path.write_text(f'{{"from": "the machine", "folder": "{folder}"}}\n')
            made.append(path)
    yield made
    for path in made:
        path.unlink(missing_ok=True)
        Path(f"{path}.new").unlink(missing_ok=True)


_OVERLAY_TRIAL = (
    "mount -t tmpfs t /dev/shm && mkdir /dev/shm/u /dev/shm/w && mount -t overlay overlay "
    "-o lowerdir=/tmp,upperdir=/dev/shm/u,workdir=/dev/shm/w /tmp"
)


@pytest.fixture
def layered(isolated):
    """Where this kernel mounts an overlay in a new user and mount namespace (tried here
    with util-linux alone, whatever capy does)."""
    import subprocess

    trial = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", _OVERLAY_TRIAL], capture_output=True, timeout=30
    )
    if trial.returncode != 0:
        pytest.skip("this kernel refuses an unprivileged overlay: calls get empty temp folders")


def test_a_call_reads_the_files_the_machine_has_in_its_temp_folders(
    layered, view, host_files
) -> None:
    for path in host_files:
        shell = execute("shell", f"cat {path}", rules=view)
        assert shell.output == path.read_text(), shell
        code = f"import json; print(json.load(open({str(path)!r}))['from'])"
        assert execute("python", code, rules=view).output == "the machine\n"


def test_a_call_through_the_ready_spawner_reads_them_too(layered, ready, view, host_files) -> None:  # noqa: F811
    _warm_up(view)
    for path in host_files:
        assert execute("shell", f"cat {path}", rules=view).output == path.read_text()


def test_a_calls_writes_reach_neither_the_machine_nor_another_call(
    layered, view, host_files
) -> None:
    before = {path: path.read_text() for path in host_files}
    changes = "; ".join(
        f"echo changed > {path}; echo new > {path}.new; cat {path}" for path in host_files
    )
    wrote = execute("shell", changes, rules=view)
    assert wrote.output == "changed\n" * len(host_files), wrote  # the call sees its own
    janitor.wait_for_cleanup()
    for path in host_files:
        assert path.read_text() == before[path]
        assert not Path(f"{path}.new").exists()
    removes = "; ".join(f"rm {path} && test ! -e {path}" for path in host_files)
    assert execute("shell", removes, rules=view).ok
    for path in host_files:
        assert path.exists()
        later = execute("shell", f"cat {path}; cat {path}.new 2>&1", rules=view)
        assert later.output.startswith(before[path]), later
        assert "No such file" in later.output


def test_empty_mode_still_gives_each_call_empty_temp_folders(isolated, view, host_files) -> None:
    empty = _empty(view)
    for path in host_files:
        assert "No such file" in execute("shell", f"cat {path} 2>&1", rules=empty).output


def test_a_call_cannot_see_or_change_another_running_calls_temp_files(isolated, view) -> None:
    tag = secrets.token_hex(6)
    places = [f"{folder}/capy-test-{tag}" for folder in ("/tmp", "/var/tmp", "/dev/shm")]
    places = [place for place in places if os.path.isdir(os.path.dirname(place))]
    writer = (
        f"for p in {' '.join(places)}; do echo mine > $p; done; sleep 4; cat {' '.join(places)}"
    )
    outputs: list[str] = []
    thread = threading.Thread(
        target=lambda: outputs.append(execute("shell", writer, rules=view, timeout=30).output)
    )
    thread.start()
    time.sleep(1.5)
    other = execute(
        "shell",
        f"for p in {' '.join(places)}; do echo theirs > $p 2>/dev/null; done; "
        f"ls -A {isolation.calls_root(view.isolation)} 2>/dev/null; true",
        rules=view,
        timeout=30,
    )
    thread.join(30)
    assert outputs == ["mine\n" * len(places)]  # the other call's writes went to its own
    assert other.ok and other.output == ""  # and it saw no call's folder
    for place in places:
        assert not os.path.exists(place)


def test_a_calls_temp_files_are_gone_when_it_ends(isolated, view) -> None:
    tag = secrets.token_hex(6)
    wrote = execute(
        "shell",
        f"echo kept > /tmp/capy-test-{tag} && mkdir /var/tmp/capy-test-{tag} && pwd",
        rules=view,
    )
    assert wrote.ok, wrote
    janitor.wait_for_cleanup()
    assert not os.path.exists(f"/tmp/capy-test-{tag}")
    assert not os.path.exists(f"/var/tmp/capy-test-{tag}")
    later = execute("shell", f"cat /tmp/capy-test-{tag} 2>&1; ls /tmp", rules=view)
    assert "kept" not in later.output


@pytest.mark.parametrize("mode", ["overlay", "empty"])
def test_the_working_folder_and_a_file_under_tmp_stay_in_sight(
    isolated, view, tmp_path: Path, mode: str
) -> None:
    """The working folder and a file beside it (under /tmp where the tests' lie there) are
    bound into the call's own /tmp at their paths; in mode empty nothing else of the
    machine's /tmp is, in mode overlay the rest reads as the machine has it."""
    if mode == "empty":
        view = _empty(view)
    shown = mode == "overlay" and isolation.temp_mode(view.isolation) == "overlay"
    project = Path.cwd()
    (project / "notes.txt").write_text("in the project\n")
    data = tmp_path / "outside" / "data.csv"
    data.parent.mkdir()
    data.write_text("a,b\n1,2\n")
    (tmp_path / "outside" / "sibling.txt").write_text("not handed over")
    code = (
        f"print(open({str(project / 'notes.txt')!r}).read().strip())\n"
        "print(FILE_CONTENT.strip().splitlines()[-1])\n"
        "import os\n"
        f"print(os.path.exists({str(data.parent / 'sibling.txt')!r}))\n"
    )
    result = execute_file(data, "python", code, rules=view, cwd=project)
    assert result.exit_code == 0, result
    sibling = str(shown or not data.is_relative_to("/tmp"))
    assert result.output.splitlines()[:3] == ["in the project", "1,2", sibling]
    if shown:
        return
    code = "import json, os; print(json.dumps(os.listdir('/tmp')))"
    listed = execute("python", code, rules=view, cwd=project)
    top = project.relative_to("/tmp").parts[0] if project.is_relative_to("/tmp") else None
    assert set(json.loads(listed.output)) <= {"capy-call", top}


def test_a_call_in_a_temp_folder_itself_is_refused(isolated, view) -> None:
    """Binding /tmp into the call would show it every other call's folder."""
    with pytest.raises(ExecutorError, match="runs no call in /tmp"):
        execute("shell", "true", rules=view, cwd="/tmp")


def test_a_ready_spawner_keeps_nothing_of_the_call_before(isolated, ready, view) -> None:  # noqa: F811
    _warm_up(view)
    tag = secrets.token_hex(6)
    assert execute("shell", f"echo x > /tmp/capy-test-{tag}", rules=view).ok
    janitor.wait_for_cleanup()
    prejoin.settle()
    later = execute("shell", f"ls /tmp; cat /tmp/capy-test-{tag} 2>&1", rules=view)
    assert "No such file" in later.output


def test_a_call_whose_working_folder_is_a_hidden_capy_folder_is_refused(isolated, view) -> None:
    """From a working folder inside a hidden folder the call would start beneath the empty
    mount, where capy's keys are; it is refused with one sentence instead."""
    from capy.config.paths import data_dir

    inside = data_dir() / "some-project"
    inside.mkdir(parents=True)
    with pytest.raises(ExecutorError, match="one of capy's own folders"):
        execute("shell", "ls", rules=view, cwd=inside)


def test_capy_uses_no_key_in_a_hidden_folder_that_moved(isolated, view, monkeypatch) -> None:
    """A call renamed the key folder's parent and left a decoy at the old path: capy itself
    neither reads a key there nor makes one (it would use, or leave, a key the call chose
    the place of)."""
    from capy.store.errors import KeyFileError
    from capy.store.keys import key_file_path, load_or_create_key_file

    parent = Path.cwd() / "config"
    key_dir = parent / "capy"
    monkeypatch.setenv("CAPY_KEY_DIR", str(key_dir))
    load_or_create_key_file(key_file_path(key_dir, "db"))
    assert execute("shell", "true", rules=view).ok  # capy hides the folder, and records it
    moved = f"mv '{parent}' '{parent}-moved' && mkdir -p '{key_dir}'"
    assert execute("shell", moved, rules=view, timeout=30).ok
    with pytest.raises(KeyFileError, match="was moved or replaced"):
        load_or_create_key_file(key_file_path(key_dir, "vault"))
    assert list(key_dir.iterdir()) == []  # nothing made in the decoy


@pytest.mark.parametrize("planted", ["link", "file"])
def test_what_another_user_left_at_tmp_capy_call_does_not_stop_a_call(
    layered, view, tmp_path: Path, planted: str
) -> None:
    """The overlay shows the machine's /tmp, where anyone may make /tmp/capy-call first: a
    link the call folder's mount would follow, or a file it cannot mount on. The call's
    shell removes it from the call's own view before the mount."""
    place = Path("/tmp/capy-call")
    if os.path.lexists(place):
        pytest.skip("/tmp/capy-call already exists on this machine")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kept.txt").write_text("kept\n")
    if planted == "link":
        place.symlink_to(elsewhere)
    else:
        place.write_text("planted\n")
    try:
        result = execute("python", "import os; print(os.getcwd())", rules=view)
        assert result.output == "/tmp/capy-call\n", result
        assert os.path.lexists(place)  # the machine's entry is left as it was
    finally:
        place.unlink()
    assert [p.name for p in elsewhere.iterdir()] == ["kept.txt"]


def test_capys_data_folder_stays_hidden_in_a_home_under_tmp(isolated, view, monkeypatch) -> None:
    """A home under /tmp is bound into the call from a descriptor opened before its mounts,
    which shows the machine's folder as it is: capy's data folder inside it (and its calls'
    scripts there) is covered again after the bind."""
    import shutil
    import tempfile

    from capy.config.paths import data_dir

    home = Path(tempfile.mkdtemp(prefix="capy-test-home-", dir="/tmp"))
    try:
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
        (home / "notes.txt").write_text("in the home\n")
        result = execute("shell", f"cat {home}/notes.txt; ls -A {data_dir()}; echo end", rules=view)
        assert data_dir().is_relative_to(home) and (data_dir() / "calls").is_dir()
        assert result.output == "in the home\nend\n", result
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_socket_in_the_machines_tmp_stays_out_of_reach(layered, view) -> None:
    """The overlay shows a socket's file (a tmux or ssh-agent socket under /tmp), but a
    connection through it reaches no listener: the overlay's inode is not the socket's."""
    import socket

    path = f"/tmp/capy-test-socket-{secrets.token_hex(6)}"
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(path)
        listener.listen(1)
        code = (
            "import socket\ns = socket.socket(socket.AF_UNIX)\n"
            f"try:\n    s.connect({path!r}); print('connected')\n"
            "except OSError as error:\n    print(type(error).__name__)\n"
        )
        result = execute("python", code, rules=view)
        assert result.output == "ConnectionRefusedError\n", result
    finally:
        listener.close()
        os.unlink(path)


def test_the_call_folders_a_crashed_capy_left_are_removed(tmp_path) -> None:
    # Call folders live in capy's data folder, which no boot clears: a capy killed mid-call
    # left its folder there for good. The next process to use the folder removes those whose
    # process is gone, and keeps a live process's, and anything not named as capy names them.
    import subprocess

    from capy.executor import private

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    calls = tmp_path / private.CALLS_FOLDER
    calls.mkdir(mode=0o700)
    stale = calls / f"{private.HOST_PREFIX}{gone.pid}-abc123"
    live = calls / f"{private.HOST_PREFIX}{os.getppid()}-def456"
    other = calls / "notes"
    for folder in (stale, live, other):
        folder.mkdir()
        (folder / "script.sh").write_text("echo left behind\n")
    assert private.calls_folder(str(tmp_path)) == str(calls)
    janitor.wait_for_cleanup()
    assert not stale.exists()
    assert live.exists() and other.exists()
    assert private.call_prefix() == f"{private.HOST_PREFIX}{os.getpid()}-"
