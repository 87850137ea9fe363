"""Each call in its own PID and mount namespaces: no other process is within its reach.

Code in a call runs as capy's user. Without more, it could name any process of that user and
read its memory (ptrace, process_vm_readv, /proc/<pid>/mem: another running call, or a capy
server holding the database keys), read its environment, open a running call's pipes through
/proc/<pid>/fd, and rewrite the limits of another server's live cgroups. So each call starts
as PID 1 of a new PID namespace, in a new mount namespace (util-linux `unshare`), where the
executor pack's mounts are made before any of its code runs: its own /proc, read-only, which
lists only the call's own processes and through which no kernel setting can be written, and an
empty read-only tmpfs over the cgroup tree. No other process has a pid the call can name, so
ptrace, signals, pidfds and /proc reach only its own. Its temp folders are its own too
(`private`: overlays over the machine's where the kernel allows, else empty, found by a
trial like the rest): the call's folder, with its script, is bound in from where no call
sees it.

What keeps the call from undoing this depends on who capy is:
- root: the call keeps only the pack's `keep_capabilities` (`setpriv` clears the rest from its
  bounding set), so it can neither unmount its /proc (to find the machine's beneath) nor load
  a module or read raw memory; root's file access stays, so package managers still work;
- anyone else: the call runs in a user namespace (as root there while its mounts are made,
  then as the user's own id in a nested one), whose mounts it cannot undo.

The call's first shell stays PID 1 and runs the program as its child, so the program keeps
ordinary signal behaviour (PID 1 ignores signals it has no handler for) and the namespace,
with everything left in it, ends when the program does. The mount table comes from a sealed
memfd that the call's first shell opens by capy's /proc path before entering the namespaces.

What works is found once per process by a real trial (a probe that must not see capy's own
pid). Where the kernel refuses (no namespaces, a container without the rights) a call runs
as before unless the pack says `required`, and `capy doctor` says plainly that calls are not
isolated from other processes. Where namespaces work but the empty mount over one of capy's
own folders does not, no call runs (whatever the pack says), and the refusal names the folder.

This keeps calls apart from processes and out of capy's key files; it does not keep a call
from what capy's user may change (capy's own installation included), so it is no boundary
against code the user would not run themselves.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial

from capy.executor import cgroups, hidden, private, sealed
from capy.executor.errors import ExecutorError
from capy.rules.views.executor import Isolation, IsolationMount

# The call's first shell: opens the files named before the joins by capy's /proc path (fd 3
# the mount table, fd 4 a spawner's line) and enters its cgroups, before any mount is made.
_OPEN = {1: 'exec 3<"$1" || exit 125; shift; ', 2: 'exec 3<"$1" 4<"$2" || exit 125; shift 2; '}
# Made with the machine's `mount` by its full path: the call's PATH is the user's. Paths
# are taken as written (-c): a bind's source is a descriptor the shell opened (fds 5-7, see
# `private`), which must be followed as the kernel does, not resolved into a path name.
_MOUNT = (
    '"$0" -a -c -T /dev/fd/3 || '
    '{ echo "capy: the call could not set up its own namespaces" >&2; exit 125; }; exec 3<&-; '
)
_BIND_FDS = (5, 6, 7, 8)  # the call's folder, working and home folders, a file
# PID 1 stays a shell (see the module docstring) and runs the program in a subshell that
# execs it: the shell's own stderr goes to /dev/null, so it adds no "Killed" or "Terminated"
# to the call's output when the program dies of a signal; the program gets the real one.
# The subshell first enters the call's working folder as the call sees it: the folder it
# started in is the one under the call's own mounts (its `..` the machine's /tmp). `cd` sets
# PWD and OLDPWD, which are put back as the call's environment has them.
QUIET_CHILD = "exec 9>&2 2>/dev/null; "
_RUN = QUIET_CHILD + '(cd -P -- "$1" 2>&9 && shift && {}exec "$@" 2>&9 9>&-); exit $?'
_EXEC = 'exec "$@"'  # a spawner's waiting shell becomes PID 1 and runs the call as its child
_NAMESPACES = ("--pid", "--fork", "--kill-child", "--mount")
_AS_USER_ROOT = ("--user", "--map-root-user")
_PROBE_SECONDS = 10


@dataclass(frozen=True)
class Plan:
    """How this process starts an isolated call."""

    unshare: tuple[str, ...]  # the unshare command and its options
    tail: tuple[str, ...]  # run inside, before the program: what drops the call's privileges
    mount_table: str  # capy's /proc path of the sealed fstab
    mount: str  # the mount command's full path
    # Whether the first shell inside may open capy's files and join the cgroups itself: root
    # may; in a user namespace opening capy's files by /proc path is refused (another user
    # namespace's process), so a shell outside does it first.
    inside: bool
    fstab: str = ""  # the sealed fstab's text: the start of a call's own table with binds
    helper_table: str = ""  # capy's /proc path of a ready spawner's fstab (its call folder)
    private: tuple[str, ...] = ()  # the call's own temp folders (see `private`)
    overlay: str = ""  # shell laying the call's shown temp folders over the machine's
    temp_mode: str = "empty"  # what calls get: "overlay" (see `private.overlay_shell`)
    covers: tuple[tuple[str, str], ...] = ()  # (target, line) of each hidden folder's mount

    def command(
        self, argv: list[str], join_files: list[str], cwd: str = "/", binds=(), env=None
    ) -> tuple[list[str], int | None]:
        """`argv` run isolated in `cwd` (as the call sees it), after joining `join_files`
        (cgroup.procs paths), with `binds` (`private.Bind`) made after the mounts, PWD and
        OLDPWD as in `env`; and the descriptor of the call's own sealed table the spawn must
        pass on (then close)."""
        run = _RUN.format(_as_in(env or {}))
        if not binds:
            return self._wrap([self.mount_table], join_files, run, [cwd, *self.tail, *argv]), None
        fd = _own_table(self.fstab, binds, covers=self.covers)
        sources = [bind.source for bind in binds]
        wrapped = self._wrap(
            [f"/dev/fd/{fd}"], join_files, run, [*sources, cwd, *self.tail, *argv], len(binds)
        )
        return wrapped, fd

    def helper(
        self, line_path: str, join_files: list[str], waiting: list[str], binds=()
    ) -> tuple[list[str], int | None]:
        """A spawner: `waiting` (a shell that sources fd 4 once told to) runs isolated, with the
        file at `line_path` open as fd 4, its own call folder and `binds` mounted; and the
        descriptor of its own table to pass on, as for `command`."""
        inner = [*(bind.source for bind in binds), *self.tail, *waiting]
        if not binds:
            return self._wrap([self.helper_table, line_path], join_files, _EXEC, inner), None
        fd = _own_table(self.fstab, binds, private.spawner_fstab_for(self.private), self.covers)
        return self._wrap([f"/dev/fd/{fd}", line_path], join_files, _EXEC, inner, len(binds)), fd

    def _wrap(
        self, files: list[str], joins: list[str], last: str, inner: list[str], binds: int = 0
    ) -> list[str]:
        opens_and_joins = _OPEN[len(files)] + cgroups.JOIN_LOOP + "shift; "
        closes = "".join(f"exec {fd}<&-; " for fd in _BIND_FDS[:binds])
        mount = _opens(binds) + self.overlay + _MOUNT + closes
        if self.inside:  # one shell fewer: it opens and joins from inside, before its mounts
            return [
                *self.unshare,
                "--",
                cgroups.SHELL,
                "-c",
                opens_and_joins + mount + last,
                self.mount,
                *files,
                *joins,
                "--",
                *inner,
            ]
        return [
            cgroups.SHELL,
            "-c",
            opens_and_joins + 'exec "$@"',
            "capy-sandbox",
            *files,
            *joins,
            "--",
            *self.unshare,
            "--",
            cgroups.SHELL,
            "-c",
            mount + last,
            self.mount,
            *inner,
        ]


def _as_in(env) -> str:
    """Shell putting PWD and OLDPWD back as `env` has them (set, or unset)."""
    return "".join(
        f"export {name}={shlex.quote(env[name])}; " if name in env else f"unset {name}; "
        for name in ("PWD", "OLDPWD")
    )


def _own_table(fstab: str, binds, after: str = "", covers=()) -> int:
    """An inheritable descriptor of a sealed table: `fstab`, the binds' lines, then `after`.

    A bound folder is bound from a descriptor opened before any mount, so it shows the
    machine's folder as it is: a hidden folder of capy's inside it (a data folder in a home
    under /tmp) is covered again after the binds (`covers`)."""
    if len(binds) > len(_BIND_FDS):
        raise OSError("a call binds more folders than it has descriptors for")
    lines = "".join(bind.line(fd) for bind, fd in zip(binds, _BIND_FDS, strict=False))
    lines += "".join(
        line
        for target, line in covers
        if any(bind.folder and private.within(target, bind.target) for bind in binds)
    )
    fd = sealed.sealed_file(os.fsencode(fstab + lines + after), "capy-call-mounts")
    if fd is None:
        raise OSError("the call's own mount table could not be sealed")
    os.set_inheritable(fd, True)
    return fd


def _opens(binds: int) -> str:
    """The shell opening the call's first `binds` arguments as the bind descriptors."""
    if not binds:
        return ""
    opened = " ".join(f'{fd}<"${at}"' for at, fd in enumerate(_BIND_FDS[:binds], 1))
    return f"exec {opened} || exit 125; shift {binds}; "


def plan(isolation: Isolation, *, offline: bool = False) -> Plan | None:
    """This machine's plan for `isolation` (None: calls run unisolated); ExecutorError where
    every call is refused (see `refusal`)."""
    folders = _hidden(isolation)
    found, failed = _plan(isolation, offline, folders.paths)
    if why := _refusal(isolation, folders, found, failed):
        raise ExecutorError(why)
    return found


def refusal(isolation: Isolation) -> str | None:
    """Why every call is refused here (one sentence); None when calls run."""
    folders = _hidden(isolation)
    return _refusal(isolation, folders, *_plan(isolation, False, folders.paths))


def _refusal(
    isolation: Isolation, folders: hidden.Folders, found: Plan | None, failed: str | None
) -> str | None:
    if folders.moved and (found is not None or isolation.required):
        return folders.moved  # a call renamed a hidden folder's parent: never run it in sight
    if failed:  # isolation works, hiding this folder does not: never run it in sight
        return (
            f"capy could not hide its folder {failed} from calls (the empty read-only mount "
            "over it failed), so no call runs rather than one that could read capy's keys and "
            "stores. Make it a plain folder capy can mount over, or move it "
            "(CAPY_KEY_DIR, CAPY_DATA_DIR)."
        )
    if not isolation.required:
        return None
    if found is None:
        return (
            "the executor pack requires each call to run isolated from other processes, and "
            f"this machine cannot: {unavailable_reason(isolation)}. Run capy where PID and "
            "mount namespaces are allowed, or set isolation.required to false."
        )
    if folders.in_sight:
        return (
            "the executor pack requires each call to run isolated, and "
            f"{'; '.join(folders.in_sight)}. Fix that, or set isolation.required to false."
        )
    return None


def check_cwd(isolation: Isolation, cwd: str | os.PathLike[str]) -> None:
    """ExecutorError for a call whose working folder lies in one of capy's hidden folders:
    the call would see it empty, or (from the folder it started in) reach what is hidden."""
    folder = hidden.holding(_hidden(isolation), cwd)
    if folder is not None:
        raise ExecutorError(
            f"capy runs no call in {os.path.realpath(cwd)}: it lies in {folder}, one of capy's "
            "own folders (keys, config, stores) that calls never see. Run it from a project "
            "folder."
        )


def unavailable_reason(isolation: Isolation) -> str | None:
    """Why calls run unisolated (or not at all) here; None when they are isolated."""
    found, failed = _plan(isolation, False, _hidden(isolation).paths)
    if failed:
        return f"capy's folder {failed} could not be hidden from calls"
    if found is not None:
        return None
    return _missing() or (
        "the kernel refused new PID and mount namespaces (it takes root with CAP_SYS_ADMIN, "
        "or unprivileged user namespaces)"
    )


def in_sight(isolation: Isolation) -> tuple[str, ...]:
    """Sentences: what of capy's own stays in sight of an isolated call, and why."""
    folders = _hidden(isolation)
    return folders.in_sight + folders.exposed


def temp_mode(isolation: Isolation) -> str | None:
    """What isolated calls get as temp folders here: "overlay" or "empty" (None: unisolated)."""
    found, _ = _plan(isolation, False, _hidden(isolation).paths)
    return None if found is None else found.temp_mode


def calls_root(isolation: Isolation, folders: tuple[str, ...] | None = None) -> str | None:
    """capy's folder for isolated calls' own folders, inside one of its hidden folders (its
    data folder first), so that no call sees another's script, whatever its temp folders
    show; made 0700 if missing. None where no folder is hidden or it cannot be made."""
    names = tuple(filter(None, map(_folder, isolation.mounts)))
    places = _hidden(isolation).paths if folders is None else folders
    for _, place in sorted(zip(names, places, strict=False), key=lambda p: p[0] != "data_dir"):
        if place:
            return private.calls_folder(place)
    return None


def moved(isolation: Isolation) -> str | None:
    """Why no spawner may start now: one of capy's hidden folders moved (see `hidden`)."""
    return _hidden(isolation).moved


def _missing() -> str | None:
    if not sys.platform.startswith("linux"):
        return "it needs Linux namespaces"
    if not sealed.available():
        return "this Python cannot seal a memfd"
    for tool in ("unshare", "mount", "setpriv"):
        if _tool(tool) is None:
            return f"the `{tool}` command (util-linux) is not on PATH"
    return None


@cache
def _tool(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")


def _hidden(isolation: Isolation) -> hidden.Folders:
    """Where capy's own folders named by the pack's mounts are here (see `hidden`)."""
    return hidden.resolve(tuple(filter(None, map(_folder, isolation.mounts))))


def _folder(mount: IsolationMount) -> str | None:
    return hidden.placeholder(mount.target)


@cache
def _plan(
    isolation: Isolation, offline: bool, folders: tuple[str, ...]
) -> tuple[Plan | None, str | None]:
    """The plan (None: calls run unisolated), and the folder of `folders` whose mount alone
    failed the trial (then there is no plan, and no call may run)."""
    if _missing() is not None:
        return None, None
    net = ("--net",) if offline else ()
    unshare = str(_tool("unshare"))
    candidates = []
    if os.geteuid() == 0:
        keep = ",".join(["-all", *(f"+{cap}" for cap in isolation.keep_capabilities)])
        drop = (str(_tool("setpriv")), "--bounding-set", keep, "--inh-caps", "-all", "--")
        candidates.append(((unshare, *_NAMESPACES, *net), drop, False))  # see Plan.inside
    back_to_user = (
        unshare,
        "--user",
        f"--map-user={os.geteuid()}",
        f"--map-group={os.getegid()}",
        "--",
    )
    candidates.append(((unshare, *_AS_USER_ROOT, *_NAMESPACES, *net), back_to_user, True))
    layered = (
        private.overlaid(isolation.private_tmp)[1] is not None
        and _tool("mkdir") is not None
        and _tool("rm") is not None
        and calls_root(isolation, folders) is not None
    )
    for options, tail, in_user_namespace in candidates:
        trial = partial(_trial, isolation, options, tail, in_user_namespace)
        if layered and (found := trial(folders, True)):
            return found, None  # the overlay works here; else calls get empty temp folders
        if found := trial(folders):
            return found, None
        if any(folders) and trial(("",) * len(folders)):
            return None, _failing_folder(folders, trial)
    return None, None


def _trial(
    isolation: Isolation,
    options: tuple[str, ...],
    tail: tuple[str, ...],
    in_user_namespace: bool,
    places: tuple[str, ...],
    layered: bool = False,
) -> Plan | None:
    """The candidate with the mounts' `{name}` targets at `places` (and, `layered`, the
    temp folders laid over the machine's), if a trial call works."""
    overlaid = private.overlaid(isolation.private_tmp)[0] if layered else ()
    text = _table_text(isolation, in_user_namespace, places, overlaid)
    covers = _covers(isolation, in_user_namespace, places)
    table = _sealed_table(text)
    helper_table = _sealed_table(text + private.spawner_fstab(isolation.private_tmp))
    if table is None or helper_table is None:
        return None
    found = Plan(
        options,
        tail,
        table,
        str(_tool("mount")),
        not in_user_namespace,
        text,
        helper_table,
        private.roots(isolation.private_tmp),
        private.overlay_shell(isolation.private_tmp, str(_tool("mkdir")), str(_tool("rm")))
        if overlaid
        else "",
        "overlay" if overlaid else "empty",
        covers,
    )
    return found if _works(found) else None


def _failing_folder(folders: tuple[str, ...], trial: Callable) -> str:
    """The first of `folders` whose mount alone fails the trial."""
    for index, folder in enumerate(folders):
        alone = tuple(place if at == index else "" for at, place in enumerate(folders))
        if folder and trial(alone) is None:
            return folder
    return ", ".join(filter(None, folders))  # each works alone, not together


@cache
def _sealed_table(text: str) -> str | None:
    """capy's /proc path of a sealed fstab holding `text` (kept open for the process)."""
    fd = sealed.sealed_file(os.fsencode(text), "capy-mounts")
    return None if fd is None else f"/proc/{os.getpid()}/fd/{fd}"


@cache
def _table_text(
    isolation: Isolation,
    in_user_namespace: bool,
    folders: tuple[str, ...],
    overlaid: tuple[str, ...] = (),
) -> str:
    """The fstab of the pack's mounts, then of the call's own empty temp folders (see
    `private`; those `overlaid` are laid over before this table is mounted); `folders` are
    where the mounts' `{name}` targets are, in order ("" for none).

    In a user namespace /proc stays writable: the nested namespace that gives the call back
    its own user id writes its id map there, and no kernel setting is writable by a call
    that is not root on the machine anyway."""
    lines = _mount_lines(isolation, in_user_namespace, folders)
    return "".join(line for _, line, _ in lines) + private.fstab(isolation.private_tmp, overlaid)


def _covers(
    isolation: Isolation, in_user_namespace: bool, folders: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """(target, line) of the mounts hiding capy's own folders."""
    lines = _mount_lines(isolation, in_user_namespace, folders)
    return tuple((target, line) for target, line, hides in lines if hides)


@cache
def _mount_lines(
    isolation: Isolation, in_user_namespace: bool, folders: tuple[str, ...]
) -> tuple[tuple[str, str, bool], ...]:
    """(target, fstab line, whether it hides one of capy's folders) of the pack's mounts."""
    places = iter(folders)
    lines, seen = [], set()
    for mount in isolation.mounts:
        target = next(places) if _folder(mount) is not None else mount.target
        if _folder(mount) is not None and _within_another(target, folders):
            continue  # the outer folder's empty mount hides it, and its target is gone there
        if target and target not in seen and os.path.isdir(target):
            seen.add(target)  # {key_dir} is {config_dir} unless configured apart
            options = _options(mount, in_user_namespace)
            line = f"capy-{mount.type} {private.fstab_field(target)} {mount.type} {options} 0 0\n"
            lines.append((target, line, _folder(mount) is not None))
    return tuple(lines)


def _within_another(target: str, folders: tuple[str, ...]) -> bool:
    return any(
        folder and folder != target and target.startswith(folder.rstrip("/") + "/")
        for folder in folders
    )


def _options(mount: IsolationMount, in_user_namespace: bool) -> str:
    if not (in_user_namespace and mount.type == "proc"):
        return mount.options
    return ",".join(option for option in mount.options.split(",") if option != "ro") or "rw"


def _works(candidate: Plan) -> bool:
    """A trial call that must not see capy's own pid (its /proc is the call's own)."""
    probe = [cgroups.SHELL, "-c", f"test ! -e /proc/{os.getpid()}"]
    try:
        done = subprocess.run(
            candidate.command(probe, [])[0],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_SECONDS,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0
