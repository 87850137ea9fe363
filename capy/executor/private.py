"""Each isolated call's own temp folders, and its files out of every other call's reach.

Calls used to share the machine's /tmp: a running call could find a later call's folder
(`/tmp/capy-exec-*`) and rewrite its script before it ran, so code from an offline call ran
inside a later networked one. Where calls are isolated (`isolation`), each call's mount
namespace now gets its own copy of every folder of the pack's `private_tmp.folders` that is
a folder here (/tmp, /var/tmp, /dev/shm): with `mode: overlay`, those of `shown` are overlays
over the machine's folder (the call reads the files there, a build log the agent made, while
what it writes, changes or deletes stays in its own upper layer, see `overlay_shell`), the
rest an empty tmpfs; with `mode: empty`, or where the kernel refuses the overlay, all are
empty. Either way nothing a call writes there reaches the machine or another call, and it
ends with the call's namespace.

The call's own folder (its script, a compiled program) is made by capy in its hidden data
folder (`isolation.calls_root`), which no isolated call sees whatever its temp folders show,
or, where no folder is hidden and the folders start empty, under the first of them; it is
bound into the call at `<first>/capy-call`. A call that a ready spawner runs (its namespace
exists before the call's folder does) has a `capy-call` tmpfs of its own, and its shell
writes the script there from its sealed line (see `prejoin`): nothing outside the call ever
holds it by path.

Paths the call must still see that lie under a private folder (the working folder, the home
folder, a `capy_execute_file` target) are bound through: folders at their paths, a file into
the call's folder. The call's shell opens each before its mounts, and the bind is made from
that descriptor, so what is bound is what was there. A working folder that IS a private
folder, or a capy call folder, is refused: binding it would undo the call's own copy (and
could put other calls' folders in sight again). TMPDIR, TMP and TEMP under a private folder
point at the call's own.

Where calls are not isolated none of this exists: the call's folder is made 0700 with
O_EXCL (no other user gets in), but every call of the same user can reach it, and `capy
doctor` says so.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from capy.executor.errors import ExecutorError
from capy.rules.views.executor import PrivateTmp

CALL_FOLDER = "capy-call"
HOST_PREFIX = "capy-exec-"
CALLS_FOLDER = "calls"  # in capy's hidden data folder: isolated calls' own folders
_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")
_LAYERS_FAILED = (
    ' || { echo "capy: the call could not lay its temp folders over the machine\'s" >&2; '
    "exit 125; }; "
)
# Characters an overlay layer's path cannot hold unescaped in its mount options.
_OPTION_UNSAFE = frozenset(",:\\ \t\n=")


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


def fstab(private: PrivateTmp, overlaid: tuple[str, ...] = ()) -> str:
    """The mount table lines of the call's own empty temp folders (not those `overlaid`)."""
    return "".join(
        f"capy-tmpfs {fstab_field(root)} tmpfs {private.options} 0 0\n"
        for root in roots(private)
        if root not in overlaid
    )


@cache
def overlaid(private: PrivateTmp) -> tuple[tuple[str, ...], str | None]:
    """The private folders that show the machine's files beneath (mode overlay), and the
    empty one whose place holds their upper layers until its own tmpfs covers them; ((), None)
    where the pack asks for none, or no folder is left to hold the layers."""
    if private.mode != "overlay":
        return (), None
    shown = {os.path.realpath(folder) for folder in private.shown}
    found = roots(private)
    layered = tuple(root for root in found if root in shown and not _OPTION_UNSAFE & set(root))
    staging = next((root for root in found if root not in shown), None)
    if not layered or staging is None:
        return (), None
    return layered, staging


def overlay_shell(private: PrivateTmp, mkdir: str, rm: str) -> str:
    """Shell, run in the call's namespace before its mount table (`"$0"` is `mount`): a
    private tmpfs of upper layers, and an overlay over each folder of `overlaid`, whose lower
    layer is the machine's folder. The call reads the machine's files there; what it writes,
    changes or deletes stays in its own upper layer and ends with it. The layers' tmpfs sits
    at an empty private folder's place, which its own empty tmpfs then covers (so the call
    never sees its layers by path); a hidden folder of capy's under one is covered after.

    Whatever another user left at `<first>/capy-call` in the machine's folder (a file, or a
    link the call folder's mount would follow) is removed from the call's view (a whiteout in
    its upper layer): the call's folder is mounted at that path next."""
    layered, staging = overlaid(private)
    if staging is None:
        return ""
    layers = shlex.quote(staging)
    steps = [f'"$0" -t tmpfs -o nosuid,nodev,mode=0700 capy-tmp-layers {layers}']
    for at, root in enumerate(layered):
        upper, work = shlex.quote(f"{staging}/{at}u"), shlex.quote(f"{staging}/{at}w")
        steps.append(f"{shlex.quote(mkdir)} -m 1777 {upper} && {shlex.quote(mkdir)} {work}")
        options = f"lowerdir={root},upperdir={staging}/{at}u,workdir={staging}/{at}w,nosuid,nodev"
        steps.append(f'"$0" -t overlay -o {shlex.quote(options)} capy-tmp {shlex.quote(root)}')
    shell = " && ".join(steps) + _LAYERS_FAILED
    first = roots(private)[0]
    if first in layered:
        call = shlex.quote(f"{first}/{CALL_FOLDER}")
        shell += f"{shlex.quote(rm)} -f -- {call} 2>/dev/null; "
        shell += f"test ! -L {call} && {{ test -d {call} || test ! -e {call}; }}" + _LAYERS_FAILED
    return shell


def spawner_fstab(private: PrivateTmp) -> str:
    """The line of a ready spawner's own call folder (a tmpfs only its call writes into)."""
    return spawner_fstab_for(roots(private))


def spawner_fstab_for(found: tuple[str, ...]) -> str:
    if not found:
        return ""
    inside = fstab_field(f"{found[0]}/{CALL_FOLDER}")
    return f"capy-tmpfs {inside} tmpfs nosuid,nodev,mode=0700,X-mount.mkdir 0 0\n"


def call_prefix() -> str:
    """The start of a call folder's name in `calls_folder`: it names the capy process that made
    it, so that a later process can tell a crashed one's folders from a live one's."""
    return f"{HOST_PREFIX}{os.getpid()}-"


def calls_folder(place: str) -> str | None:
    """The folder of isolated calls' own folders in `place` (one of capy's hidden folders),
    made 0700 and of capy's user alone; None where it cannot be. The first time a process
    uses it, the folders of capy processes no longer running are removed (`_sweep_stale`)."""
    path = os.path.join(place, CALLS_FOLDER)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        found = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & 0o077:
        return None
    _sweep_stale(path)
    return path


@cache
def _sweep_stale(path: str) -> None:
    """Remove (off the call's path) the call folders a capy process left here when it was
    killed or crashed: the machine's /tmp, where they were made before, is cleared at boot,
    this folder never is. A folder is stale only when the process its name gives is gone; a
    reused pid keeps one (a leak, never a live call's folder removed)."""
    from capy.executor.cgroups import pid_alive
    from capy.executor.janitor import remove_later

    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        owner = name.removeprefix(HOST_PREFIX).split("-", 1)[0]
        if name.startswith(HOST_PREFIX) and owner.isdigit() and not pid_alive(int(owner)):
            remove_later(Path(path, name))


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
            f"capy runs no call in {project_real}: each call gets that folder to itself (what "
            "it writes there is gone when it ends), and binding it through would put other "
            "calls' files in its sight. Run it from a project folder."
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
        if _under(real, found) and not any(within(real, b.target) for b in binds[1:]):
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
    return next((root for root in found if within(path, root) and path != root), None)


def within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies in it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _exposes(path: str, found: tuple[str, ...]) -> bool:
    """Whether binding `path` would show other calls' folders: a private folder itself, or
    anything in a capy call folder."""
    if path in found:
        return True
    root = _under(path, found)
    return root is not None and path[len(root) :].lstrip("/").startswith(HOST_PREFIX)
