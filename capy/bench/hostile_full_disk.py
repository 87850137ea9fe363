"""Bad inputs on a full disk: capy's data folder on a tiny filesystem that is all but full.

Each case mounts its own 512 KiB tmpfs (root only; where mount is refused the cases are
skipped with a note), fills it up to a few KiB, points XDG_DATA_HOME there and runs a
command that must write: `capy index`, `capy vault import`, `capy sweep`. The user's answer
should be one sentence that says the disk is full and what to do, never a traceback or
"internal error". The filesystem is unmounted at the end of each case, whatever happened.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from capy.bench.hostile_common import (
    Outcome,
    Scratch,
    capy_command,
    run_process,
    settled,
    write_transcript,
)

TINY_FILESYSTEM = "512k"
# Writing commands load every rule pack and then fail late: 3-12 s on a loaded 2-core
# machine, so a quick run's 15 s deadline would call a slow run a hang here.
MIN_DEADLINE = 30.0
LEFT_FREE = 24 * 1024  # bytes: enough to create a file or two, not a knowledge base


@contextmanager
def tiny_filesystem(folder: Path) -> Iterator[Path]:
    """A tmpfs of TINY_FILESYSTEM mounted on `folder`, filled to LEFT_FREE; always unmounted."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = ["mount", "-t", "tmpfs", "-o", f"size={TINY_FILESYSTEM}", "tmpfs", str(folder)]
    subprocess.run(mount, check=True, capture_output=True, timeout=10)
    try:
        free = shutil.disk_usage(folder).free
        with (folder / "filler").open("wb") as filler:
            filler.write(b"\0" * max(0, free - LEFT_FREE))
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=10)


def mount_refused(scratch: Scratch) -> str | None:
    """Why a tiny filesystem cannot be mounted here, or None when it can."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return "full disk: skipped, mounting a tmpfs needs root and mount(8)"
    try:
        with tiny_filesystem(scratch.root / "inputs" / f"probe-{secrets.token_hex(3)}"):
            return None
    except (OSError, subprocess.SubprocessError) as error:
        return f"full disk: skipped, mount -t tmpfs was refused ({error})"


def _on_full_disk(scratch: Scratch, args: list[str], deadline: float) -> Callable[[], Outcome]:
    def run() -> Outcome:
        with tiny_filesystem(scratch.root / "inputs" / f"full-{secrets.token_hex(3)}") as data:
            env = {**scratch.env, "XDG_DATA_HOME": str(data)}
            return run_process(capy_command(*args), env=env, cwd=scratch.project, deadline=deadline)

    return run


def full_disk_cases(scratch: Scratch, deadline: float, case) -> tuple[list, list[str]]:
    """(cases, skipped notes); `case` builds the inputs family's Case (group, name, run)."""
    refused = mount_refused(scratch)
    if refused:
        return [], [refused]
    inputs = scratch.root / "inputs"
    note = inputs / "full-disk-note.md"
    # Plain prose well past what LEFT_FREE can hold once chunked and indexed.
    note.write_text(
        "".join(
            f"## step {n}\n\nThe quokka deploy step {n} runs at noon.\n\n" for n in range(4000)
        ),
        encoding="utf-8",
    )
    transcripts = inputs / "full-disk-transcripts"
    settled(
        write_transcript(transcripts, "hostile-full", [f"a quokka prompt {n}" for n in range(200)])
    )
    runs = (
        ("full disk: index", ["index", str(note), "--source", "full"]),
        ("full disk: vault import", ["vault", "import", "--source", str(transcripts)]),
        ("full disk: sweep", ["sweep", "--source", str(transcripts), "--force"]),
    )
    deadline = max(deadline, MIN_DEADLINE)
    return [case("stores", name, _on_full_disk(scratch, args, deadline)) for name, args in runs], []
