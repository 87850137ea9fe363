"""RLIMIT_NPROC, the fork-bomb cap the OS offers, seen from a non-root capy.

Linux exempts root from RLIMIT_NPROC, so under root capy skips it and relies on its process
watchdog (see test_executor_hostile). To see the real limit at work, this test runs capy as
the unprivileged `nobody` user: the system Python of the same version, with the repository and
the venv's site-packages on PYTHONPATH. Without root (so no user switch) it runs as the current
user, where the limit applies anyway.

The program starts threads, not processes. RLIMIT_NPROC is the machine's task count plus the
allowance (an upper bound of the user's own count, cheap to read), so a user with few processes
may start far more than the allowance before the limit bites; the watchdog, which counts the
call's processes, would then stop a fork loop as "process-limit" at its next tick, before it
printed anything, whenever a loaded machine made the loop outlast one tick. Threads count
against RLIMIT_NPROC like processes do but not for the watchdog, so the limit alone decides.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CHILD = '''
import json
from capy.executor import execute
from capy.rules import load_rules

CODE = """
import os, threading, time
bound = int(open('/proc/loadavg').read().split()[3].split('/')[1]) + 300
for n in range(bound):
    try:
        threading.Thread(target=time.sleep, args=(20,), daemon=True).start()
    except RuntimeError as exc:  # pthread_create failed with EAGAIN
        print('capped after', n, 'threads:', exc, flush=True)
        break
else:
    print('not capped', flush=True)
os._exit(0)
"""
view = load_rules().view("executor")
procs = view.limits.processes.model_copy(update={"max_new_processes": 20})
view = view.model_copy(update={"limits": view.limits.model_copy(update={"processes": procs})})
result = execute("python", CODE, rules=view, timeout=30)
print(json.dumps(
    {"output": result.output, "marker": result.sandbox_id, "killed": result.killed_reason}
))
'''


def _unprivileged_command() -> list[str]:
    if os.getuid() != 0:
        return [sys.executable]
    system_python = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    setpriv = shutil.which("setpriv")
    if not system_python.exists() or setpriv is None:
        pytest.skip("running as root without setpriv or a system Python of this version")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", str(system_python)]


def test_fork_loop_hits_rlimit_nproc_when_not_root() -> None:
    command = _unprivileged_command()
    # Not the test's private temp dir (the executor fixtures point tempfile there): `nobody`
    # could not enter it.
    shared_temp = os.environ.get("TMPDIR") or "/tmp"
    workdir = Path(tempfile.mkdtemp(prefix="capy-nproc-test-", dir=shared_temp))
    workdir.chmod(0o777)  # the unprivileged user writes its config and cache here
    try:
        pythonpath = os.pathsep.join([str(REPO_ROOT), sysconfig.get_paths()["purelib"]])
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "PYTHONPATH": pythonpath}
        done = subprocess.run(
            [*command, "-c", CHILD],
            env=env,
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["output"].startswith("capped after"), report
    assert report["output"].rstrip().endswith("can't start new thread"), report
    assert report["killed"] is None, report
    from capy.executor.processes import marked_processes

    assert marked_processes(report["marker"]) == []
