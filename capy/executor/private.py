"""Each isolated call's own temp folders, and its files out of every other call's reach.

Calls used to share the machine's /tmp: a running call could find a later call's folder
(`/tmp/capy-exec-*`) and rewrite its script before it ran, so code from an offline call ran
inside a later networked one. Where calls are isolated (`isolation`), each call's mount
namespace now gets an empty tmpfs over every folder of the pack's `private_tmp.folders` that
is a folder here (/tmp, /var/tmp, /dev/shm), after the pack's other mounts: no call sees the
machine's temp folders nor another call's, and what it wrote there ends with its namespace.

The call's own folder (its script, a compiled program) is made by capy under the first of
them, which every isolated call sees covered, and is bound into the call at
`<first>/capy-call`. A call that a ready spawner runs (its namespace exists before the
call's folder does) has a `capy-call` tmpfs of its own, and its shell writes the script
there from its sealed line (see `prejoin`): nothing outside the call ever holds it by path.

Paths the call must still see that lie under a private folder (the working folder, the home
folder, a `capy_execute_file` target) are bound through: folders at their paths, a file into
the call's folder. The call's shell opens each before its mounts, and the bind is made from
that descriptor, so what is bound is what was there. A working folder that IS a private
folder, or a capy call folder, is refused: binding it would put other calls' folders in
sight again. TMPDIR, TMP and TEMP under a private folder point at the call's own.

Where calls are not isolated none of this exists: the call's folder is made 0700 with
O_EXCL (no other user gets in), but every call of the same user can reach it, and `capy
doctor` says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from capy.executor.errors import ExecutorError
from capy.rules.views.executor import PrivateTmp

CALL_FOLDER = "capy-call"
HOST_PREFIX = "capy-exec-"
_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")


def fstab_field(path: str) -> str:
    """A path as an fstab field: blanks and backslashes as octal escapes."""
    return "".join(f"\\{ord(char):03o}" if char in " \t\n\\" else char for char in path)


@cache
def roots(private: PrivateTmp) -> tuple[str, ...]:
    """The pack's private folders that are folders here, real and in order."""
    found: list[str] = []
    for folder in private.folders:
        real = os.path.realpath(folder)
        if real != "/" and os.path.isdir(real) and real not in found:
            found.append(real)
    return tuple(found)


def fstab(private: PrivateTmp) -> str:
    """The mount table lines of the call's own temp folders."""
    return "".join(
        f"capy-tmpfs {fstab_field(root)} tmpfs {private.options} 0 0\n" for root in roots(private)
    )


def spawner_fstab(private: PrivateTmp) -> str:
    """The line of a ready spawner's own call folder (a tmpfs only its call writes into)."""
    return spawner_fstab_for(roots(private))


def spawner_fstab_for(found: tuple[str, ...]) -> str:
    if not found:
        return ""
    inside = fstab_field(f"{found[0]}/{CALL_FOLDER}")
    return f"capy-tmpfs {inside} tmpfs nosuid,nodev,mode=0700,X-mount.mkdir 0 0\n"


@dataclass(frozen=True)
class Bind:
    """A path of the machine that the call sees at `target` (opened before its mounts)."""

    source: str
    target: str
    folder: bool

    def line(self, fd: int) -> str:
        options = "rbind,X-mount.mkdir" if self.folder else "bind"
        return f"/proc/self/fd/{fd} {fstab_field(self.target)} none {options} 0 0\n"


@dataclass(frozen=True)
class Layout:
    """Where one call's files are, as capy and as the call see them."""

    host: Path  # capy's folder for the call
    inside: str  # the same folder as the call sees it
    binds: tuple[Bind, ...] = ()  # the call's folder first, then folders, then a file
    file_inside: str | None = None  # the execute_file target as the call sees it

    @property
    def private(self) -> bool:
        return self.inside != str(self.host)


def host_root(private: PrivateTmp | None) -> str | None:
    """Where capy makes a call's folder: under the first private folder (None: the temp dir)."""
    found = roots(private) if private is not None else ()
    return found[0] if found else None


def layout(
    private: PrivateTmp | None,
    host: Path,
    *,
    project: Path,
    home: Path,
    file_path: str | None,
) -> Layout:
    """The call's layout (`private` None: calls are not isolated); ExecutorError for a working
    folder that would bring other calls' folders back in sight."""
    found = roots(private) if private is not None else ()
    if not found:
        return Layout(host, str(host), (), file_path)
    inside = f"{found[0]}/{CALL_FOLDER}"
    binds = [Bind(str(host), inside, True)]
    project_real = os.path.realpath(project)
    if _exposes(project_real, found):
        raise ExecutorError(
            f"capy runs no call in {project_real}: each call gets that folder empty and to "
            "itself, and running there would show it other calls' files. Run it from a "
            "project folder."
        )
    folders = [project_real]
    home_real = os.path.realpath(home)
    if not _exposes(home_real, found):  # a home that is a temp folder stays the call's own
        folders.append(home_real)
    for folder in sorted({f for f in folders if _under(f, found)}, key=len):
        binds.append(Bind(folder, folder, True))
    file_inside = file_path
    if file_path is not None:
        real = os.path.realpath(file_path)
        if _under(real, found) and not any(_within(real, b.target) for b in binds[1:]):
            name = f"input-{os.path.basename(real)}"
            placeholder = os.open(host / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(placeholder)  # the bind's target: a file, inside the call's folder
            file_inside = f"{inside}/{name}"
            binds.append(Bind(real, file_inside, False))
    return Layout(host, inside, tuple(binds), file_inside)


def temp_variables(env: dict[str, str], private: PrivateTmp | None) -> None:
    """Point TMPDIR, TMP and TEMP that lie under a private folder at the call's own."""
    found = roots(private) if private is not None else ()
    for name in _TEMP_VARIABLES:
        value = env.get(name)
        if value and found and (root := _under(os.path.realpath(value), found)):
            env[name] = root


def _under(path: str, found: tuple[str, ...]) -> str | None:
    """The private folder holding `path` (strictly), if any."""
    return next((root for root in found if _within(path, root) and path != root), None)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _exposes(path: str, found: tuple[str, ...]) -> bool:
    """Whether binding `path` would show other calls' folders: a private folder itself, or
    anything in a capy call folder."""
    if path in found:
        return True
    root = _under(path, found)
    return root is not None and path[len(root) :].lstrip("/").startswith(HOST_PREFIX)
