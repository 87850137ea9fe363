"""Executor tests: the shipped executor view, tuned copies with small limits, and a leak check.

Every test ends by asserting that nothing it started survives: no process carrying a marker of
any call the test made, no zombie child of the test process, and no temp dir left behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capy.executor import background, janitor, processes
from capy.executor.errors import ExecutorError
from capy.executor.runtimes import find_language, resolve_runtime
from capy.rules import build_ruleset
from capy.rules.views.executor import ExecutorPack


@pytest.fixture(scope="session")
def shipped_view() -> ExecutorPack:
    """The shipped executor pack alone (no overlays can exist yet), built once: a cold build
    costs seconds, and the view is frozen, so sharing it is safe."""
    return build_ruleset(include_shipped=True).view("executor")


@pytest.fixture
def view(shipped_view: ExecutorPack) -> ExecutorPack:
    return shipped_view


def tuned(view: ExecutorPack, **limits: Any) -> ExecutorPack:
    """A copy of the view with some limits changed: `timeout`, `grace`, `hard_cap`,
    `max_returned`, `max_processes`, `memory`, `max_jobs`, `buffer`, `concurrency_max`."""
    timeout = view.limits.timeout.model_copy(
        update={
            key: value
            for key, value in (
                ("default_seconds", limits.get("timeout")),
                ("kill_grace_seconds", limits.get("grace")),
            )
            if value is not None
        }
    )
    output = view.limits.output.model_copy(
        update={
            key: value
            for key, value in (
                ("hard_cap_bytes", limits.get("hard_cap")),
                ("max_returned_bytes", limits.get("max_returned")),
            )
            if value is not None
        }
    )
    procs = view.limits.processes.model_copy(
        update={"max_new_processes": limits.get("max_processes", 1024)}
    )
    jobs = view.limits.background.model_copy(
        update={
            key: value
            for key, value in (
                ("max_jobs", limits.get("max_jobs")),
                ("buffer_bytes", limits.get("buffer")),
                ("max_runtime_seconds", limits.get("max_runtime")),
            )
            if value is not None
        }
    )
    memory = view.limits.memory.model_copy(
        update={"max_bytes": limits.get("memory", view.limits.memory.max_bytes)}
    )
    new_limits = view.limits.model_copy(
        update={
            "timeout": timeout,
            "output": output,
            "processes": procs,
            "memory": memory,
            "background": jobs,
        }
    )
    return view.model_copy(update={"limits": new_limits})


def require_runtime(view: ExecutorPack, language: str) -> None:
    try:
        resolve_runtime(find_language(view, language))
    except ExecutorError as exc:
        pytest.skip(f"{language} is not installed here: {exc}")


@pytest.fixture
def real_toolchains(monkeypatch: pytest.MonkeyPatch) -> None:
    """rustup finds its toolchains under HOME, which the tests replace: point it back."""
    import pwd

    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for name, folder in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
        if name not in os.environ and (home / folder).is_dir():
            monkeypatch.setenv(name, str(home / folder))


def capy_temp_dirs() -> set[Path]:
    """Call folders: in the temp dir, or (isolated calls) in capy's data folder."""
    import tempfile

    from capy.config.paths import data_dir
    from capy.executor.private import CALLS_FOLDER

    places = (Path(tempfile.gettempdir()), data_dir() / CALLS_FOLDER)
    return {found for place in places for found in place.glob("capy-exec-*")}


def zombie_children() -> list[int]:
    zombies = []
    for pid in processes.children_of(os.getpid()):
        info = processes.proc_info(pid)
        if info is not None and info.state == "Z":
            zombies.append(pid)
    return zombies


@pytest.fixture(autouse=True)
def nothing_leaks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """Collect every call's marker; afterwards none may have a live process or a temp dir.

    Calls make their temp dirs in a folder of the test's own: in the shared system temp dir,
    another capy's run (another test session, the user's own capy) would count as a leak.
    """
    import tempfile

    scratch = tmp_path / "exec-tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    markers: list[str] = []
    from capy.executor import phase

    original = phase.spawn

    def recording_spawn(*args, **kwargs):
        markers.append(kwargs["marker"])
        return original(*args, **kwargs)

    monkeypatch.setattr(phase, "spawn", recording_spawn)
    from capy.executor import sandbox

    monkeypatch.setattr(sandbox, "spawn", recording_spawn)
    before = capy_temp_dirs()
    zombies_before = set(zombie_children())
    yield markers
    background.shutdown_background(grace=0.2)
    janitor.wait_for_cleanup()
    leaked = {marker: processes.marked_processes(marker) for marker in set(markers)}
    assert not {marker: pids for marker, pids in leaked.items() if pids}, "processes survived"
    # Only new zombies count: capy is a subreaper, so other tests' orphans may land here too.
    assert set(zombie_children()) - zombies_before == set()
    assert capy_temp_dirs() - before == set(), "temp dirs were left behind"
