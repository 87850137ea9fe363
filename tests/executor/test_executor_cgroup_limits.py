"""The caps a call's cgroup enforces: pids.max (exact, root included) and the memory limit.

A fork loop counts its own successful forks, so the test sees how far past the cap a program
got, not only that it was stopped in the end. Both programs are bounded by themselves too.
"""

from __future__ import annotations

import time

import pytest

from capy.executor import cgroups, execute, janitor
from tests.executor.conftest import require_runtime, tuned

FORK_COUNTER = """
import os, time
forks = 0
for _ in range(3000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    forks += 1
print("forks", forks, flush=True)
time.sleep(5)
"""


def _controller(name: str) -> None:
    if not any(name in hierarchy.controllers() for hierarchy in cgroups.hierarchies()):
        pytest.skip(f"no usable {name} cgroup controller on this machine")


def test_a_fork_loop_stops_at_the_cap_not_past_it(view) -> None:
    _controller("pids")
    small = tuned(view, max_processes=40, timeout=15, grace=0.2)
    result = execute("python", FORK_COUNTER, rules=small)
    assert result.killed_reason == "process-limit", result
    forks = int(result.output.split()[1])
    # The leader is one of the 40 tasks; pids.max refuses the fork that would be the 41st.
    assert 30 <= forks <= 39, result.output


def test_a_perl_fork_bomb_is_held_at_the_cap(view) -> None:
    _controller("pids")
    require_runtime(view, "perl")
    small = tuned(view, max_processes=64, timeout=15, grace=0.2)
    bomb = (
        "$| = 1; my $n = 0; for (1..2000) { my $pid = fork(); last unless defined $pid; "
        'if ($pid == 0) { sleep 20; exit 0 } $n++ } print "forks $n\\n"; sleep 5;'
    )
    result = execute("perl", bomb, rules=small)
    assert result.killed_reason == "process-limit", result
    assert int(result.output.split()[1]) < 64


def test_an_allocation_past_the_memory_cap_is_killed(view) -> None:
    _controller("memory")
    small = tuned(view, memory=128 * 1024 * 1024, timeout=30)
    code = "print('start', flush=True)\nblock = bytearray(512 * 1024 * 1024)\nprint('allocated')"
    result = execute("python", code, rules=small)
    assert result.killed_reason == "memory-limit", result
    assert result.exit_code == 137
    assert result.output == "start\n"


@pytest.mark.parametrize("language", ["javascript", "python", "perl", "rust", "shell"])
def test_runtimes_start_under_a_small_memory_cap(language: str, view, real_toolchains) -> None:
    """The cap counts memory used, not reserved: node and the JVM reserve gigabytes."""
    _controller("memory")
    require_runtime(view, language)
    code = {
        "javascript": "console.log(new Array(1000).fill(1).length)",
        "python": "print(len([1] * 1000))",
        "perl": "print scalar(() = (1) x 1000), qq(\\n);",
        "rust": 'fn main() { println!("{}", vec![1; 1000].len()); }',
        "shell": "seq 1000 | wc -l",
    }[language]
    small = tuned(view, memory=256 * 1024 * 1024, timeout=120)
    result = execute(language, code, rules=small)
    assert result.ok, result
    assert result.output.strip() == "1000"


def test_a_call_leaves_no_cgroup_behind(view) -> None:
    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine")
    result = execute("shell", "sleep 30 & echo started", rules=view)
    assert result.output == "started\n"
    janitor.wait_for_cleanup()
    for hierarchy in cgroups.hierarchies():
        assert not (hierarchy.home / result.sandbox_id).exists(), hierarchy.kind


def test_the_groups_of_a_capy_killed_outright_are_emptied_by_the_next(tmp_path) -> None:
    """kill -9 leaves a call's group behind: the next capy to start kills what it holds."""
    import subprocess
    import sys

    from process_helpers import unique_sleep

    usable = [h for h in cgroups.hierarchies() if h.kind is cgroups.Kind.UNIFIED] or list(
        cgroups.hierarchies()
    )
    if not usable:
        pytest.skip("no usable cgroup hierarchy on this machine")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid whose owner is dead, like a killed capy's
    stale = usable[0].home.parent / f"capy-{gone.pid}" / "call"
    stale.mkdir(parents=True)
    with unique_sleep() as tag:
        orphan = subprocess.Popen(
            ["sh", "-c", f'echo 0 > "{stale}/cgroup.procs" && exec sleep {tag}'],
            start_new_session=True,
        )
        try:
            # Until the orphan has joined the stale group: on a loaded machine its shell can
            # take seconds to start, and a capy that looked earlier would find the group empty,
            # remove it, and leave the orphan's join to fail (exit 1, not killed).
            joined_by = time.monotonic() + 60
            while not (stale / "cgroup.procs").read_text().strip():
                assert orphan.poll() is None, "the orphan could not join the stale group"
                assert time.monotonic() < joined_by, "the orphan never joined the stale group"
                time.sleep(0.01)
            code = "from capy.executor import cgroups; cgroups.hierarchies()"
            subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
            assert orphan.wait(timeout=10) == -9
            assert not stale.parent.exists()
        finally:
            orphan.kill()
            orphan.wait()


PLANTS_ITS_OWN_HOME = r"""
import json, os, subprocess, time
from capy.executor import cgroups

planted = []
for name, own_dir in cgroups._mounts().items():
    home = own_dir / f"capy-{os.getpid()}"
    try:
        (home / "planted" / "deeper").mkdir(parents=True)
    except OSError:
        continue
    planted.append(home / "planted" / "deeper")
    if name == "pids":
        (home / "pids.max").write_text("2")
join = 'for g in "$@"; do echo 0 > "$g/cgroup.procs" || exit 1; done; exec sleep 60'
sleeper = subprocess.Popen(["sh", "-c", join, "x", *map(str, planted)], start_new_session=True)
joined_by = time.monotonic() + 60
while not (planted[-1] / "cgroup.procs").read_text().strip() and time.monotonic() < joined_by:
    assert sleeper.poll() is None, "the sleeper could not join the planted groups"
    time.sleep(0.01)
found = cgroups.hierarchies()
limits = [(h.home / "pids.max").read_text().strip() for h in found if h.kind.value == "pids"]
print(json.dumps({
    "planted": len(planted),
    "left": [str(path) for path in planted if path.exists()],
    "pids_max": limits,
    "sleeper": sleeper.wait(timeout=10),
}))
"""


def test_a_home_already_named_by_this_capys_pid_is_emptied_and_made_afresh() -> None:
    """A group named by this process's pid that exists before it made one is no group of its
    own (a capy killed outright under the same pid, or a call planting it with its own limits
    and members): what it holds is killed, it is removed, and its limits are not inherited."""
    if not cgroups.hierarchies():
        pytest.skip("no usable cgroup hierarchy on this machine")
    report = _fresh_capy(PLANTS_ITS_OWN_HOME)
    assert report["planted"] > 0, report
    assert report["left"] == [], report
    assert report["sleeper"] == -9, report
    assert all(value == "max" for value in report["pids_max"]), report


ASKS_FROM_THREADS_AT_ONCE = r"""
import json, subprocess, threading, time
from capy.executor import cgroups

threads = 4
start = threading.Barrier(threads)
runs = []

def call(number):
    start.wait()
    time.sleep(0.015 * number)  # the later ones ask while the first ones' groups are in use
    group = cgroups.call_group(f"call-{number}", max_tasks=64, max_memory_bytes=None)
    argv = ["/bin/echo", "hi"]
    done = subprocess.run(group.wrap(argv) if group else argv, capture_output=True, text=True)
    runs.append([len(group.groups) if group else 0, done.returncode, done.stdout + done.stderr])
    if group is not None:
        group.kill()
        group.remove()

workers = [threading.Thread(target=call, args=(number,)) for number in range(threads)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print(json.dumps({"found": len(cgroups.hierarchies()), "runs": runs}))
"""


def test_threads_asking_for_the_hierarchies_at_once_share_one_search() -> None:
    """A server's first call and the spawners it starts beside it all ask at once. A second
    search used to clear the home the first had just made, with the groups of calls about to
    enter them ("could not enter its cgroup", exit 125) or running in them (killed), and
    could leave the process with fewer hierarchies for its whole life."""
    alone = "from capy.executor import cgroups; print(len(cgroups.hierarchies()))"
    expected = _fresh_capy(alone)
    if not expected:
        pytest.skip("no usable cgroup hierarchy on this machine")
    for _ in range(2):
        report = _fresh_capy(ASKS_FROM_THREADS_AT_ONCE)
        assert report["found"] == expected, report
        assert report["runs"] == [[expected, 0, "hi\n"]] * 4, report


def _fresh_capy(script: str):
    """What `script` prints last (JSON), run in a new process: one that has no cgroup yet."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])
