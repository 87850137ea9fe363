"""Capsule capture from hooks: a redacted, bounded record appended to the spool, and nothing
the agent waits for beyond that.

What each event becomes, the bounds and the spool live in the capsules pack (`capture`), which
reaches the hook through its compact rules cache together with the secrets detectors in force.
Content is redacted here, before the spool sees it: the spool never holds a secret the
redactor would catch. The drainer (`capy.capsules.drain`, started through `capy.drain_start`)
moves records into the log; hooks start it at the pack's `drain_on` events and when the spool
grows past its size, never at Stop, which fires after every turn. It begins once the hook that
started it has exited.
"""

from __future__ import annotations

import os
import time

from capy.hooks.events import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.hooks.context import HookContext
    from capy.masking import PlainSecrets


class Capture:
    """The capture rules of one hook call and the redactor built from them (once)."""

    def __init__(self, context: HookContext, config: dict[str, Any]):
        self.context = context
        self.config = config
        self.bounds: dict[str, int] = config["bounds"]
        self._secrets: PlainSecrets | None = None

    @property
    def secrets(self) -> PlainSecrets:
        if self._secrets is None:
            self._secrets = _detectors(self.config["secrets_file"])
        return self._secrets

    def kind_for(self, event: str) -> str | None:
        kind = self.config["events"].get(event)
        return kind if kind in self.config["kinds"] else None

    def bounded(self, text: str, bound: str) -> str:
        """`text` redacted and cut to the pack's bound (head and tail around a marker). Text
        just past each cut is redacted with the kept part, so a secret across a cut is whole
        when the detectors judge it."""
        from capy.masking import bounded_redaction

        limit = self.bounds[bound]
        margin = self.config["redaction_margin_chars"]
        return printable(bounded_redaction(text, limit, margin, self.secrets.redact))

    def redacted(self, value: Any, bound: str) -> Any:
        """A metadata value with every string in it redacted and bounded."""
        if isinstance(value, str):
            return self.bounded(value, bound)
        if isinstance(value, list):
            return [self.redacted(item, bound) for item in value]
        if isinstance(value, dict):
            return {str(key): self.redacted(item, bound) for key, item in value.items()}
        return value

    def keep(self, kind: str, content: str, metadata: dict[str, Any]) -> None:
        """Spool one capsule record (content already bounded and redacted)."""
        from capy.spooling import append_record

        hook = self.context.hook
        known = {
            "session_id": hook.session_id,
            "platform": self.context.adapter.key,
            **{key: value for key, value in metadata.items() if value not in (None, "", [])},
        }
        record = {
            "project": self.context.rules["project_root"],
            "kind": kind,
            "content": content,
            "metadata": self.redacted(known, "tool_input_chars"),
            "created_at": _utc_now(),
        }
        size = append_record(self.spool_path, record)
        if size > self.config["spool"]["drain_over_bytes"]:
            self.start_drainer()

    @property
    def spool_path(self) -> str:
        return os.path.join(self.context.data_dir, self.config["spool"]["file"])

    def start_drainer(self) -> None:
        """A detached drainer, unless one holds the drain lock already."""
        if not _drainer_running(self.spool_path):
            start_context_drainer(self.context)


_COMPILED: dict[str, PlainSecrets] = {}


def _detectors(path: str) -> PlainSecrets:
    """The redactor for a detectors file, compiled once per process: a hook that captures twice
    (a prompt, then the memory records it was shown) must not compile them twice."""
    if path not in _COMPILED:
        from capy.hooks.capture_rules import read_detectors
        from capy.masking import PlainSecrets

        _COMPILED[path] = PlainSecrets(read_detectors(path))
    return _COMPILED[path]


def redacted_event(context: HookContext, text: str) -> str | None:
    """`text` with its secrets masked by the detectors in force, for the session state the
    hooks keep in plain files, whether capture is on or not; None where the detectors cannot
    be read (a cache written by an older capy, a removed file): the event is then not kept
    rather than kept raw."""
    path = context.rules.get("secrets_file")
    if not path:
        return None
    try:
        return _detectors(path).redact(text)
    except OSError:
        return None


def capture_for(context: HookContext) -> Capture | None:
    config = context.rules.get("capture")
    return Capture(context, config) if config else None


def capture_safely(context: HookContext, action: Any) -> None:
    """Run `action(capture)` when capture is on; a failure is one note, never the hook's."""
    capture = capture_for(context)
    if capture is None:
        return
    try:
        action(capture)
    except Exception as problem:  # capture comes first in its handlers: it must not stop them
        context.note(f"the capsule was not captured ({type(problem).__name__})")


def drain_if_due(context: HookContext) -> None:
    """At the pack's drain events, start the drainer when there is a spool to drain."""
    capture = capture_for(context)
    if capture is None or context.hook.event not in capture.config["drain_on"]:
        return
    try:
        if os.path.exists(capture.spool_path):
            capture.start_drainer()
    except OSError as problem:
        context.note(f"the capsule drainer was not started ({type(problem).__name__})")


def start_context_drainer(context: HookContext, *, sessions_only: bool = False) -> None:
    """`start_drainer` for this hook's project, at the capsules pack's background niceness."""
    niceness = context.rules.get("background_niceness", 0)
    root = context.rules["project_root"]
    start_drainer(root, niceness, after_exit=context.exits_after, sessions_only=sessions_only)


# Drainers this process started and has not reaped yet (a server answering hooks in process
# lives on after them).
_SPAWNED: list[int] = []
# The write ends of the pipes on which drainers wait for this process to exit (never written,
# closed by that exit).
_HELD: list[int] = []
# The drainer's start: `python -I -S -c` (as for hooks: no site scan, no working folder on the
# path), capy's folder last on the path, then capy.drain_start, which imports only the
# standard library before it has lowered its priority.
DRAIN_START = "import sys;sys.path.append({folder});from capy.drain_start import run;run()"
AFTER_EXIT = "--after-exit"  # capy.drain_start.AFTER_EXIT, not imported: the hook pays for it
SESSIONS_ONLY = "--sessions-only"  # capy.capsules.drain.SESSIONS_ONLY, likewise


def start_drainer(
    project_dir: str, niceness: int = 0, *, after_exit: bool = False, sessions_only: bool = False
) -> None:
    """`capy.capsules.drain PROJECT` in its own session, detached from the caller's stdio, at
    `niceness` from its start; the caller does not wait for it.

    With `after_exit` (a hook process, which exits once it has answered) the drainer begins
    only when the caller has exited: its stdin is a pipe whose other end the caller holds. It
    is forked and lowers its priority before it runs Python: `os.posix_spawn` returns only
    once the child has run as far as its exec, which on a loaded machine waited several
    milliseconds for a CPU, where a fork returns in a fraction of one. Otherwise (a server
    answering hooks in process) it starts with `os.posix_spawn` where there is one, and never
    with `subprocess`, whose import (with `locale`) cost SessionEnd more than its capture.

    With `sessions_only` it saves the ended sessions' records (capy.hooks.ended_sessions) and
    leaves the capsule log alone: what SessionEnd starts when capture is off. Every drainer
    saves them first."""
    import sys

    _reap()
    if _HELD:
        return  # the drainer this process started still waits for its exit
    argv = [sys.executable, "-I", "-S", "-c", DRAIN_START.format(folder=_capy_folder())]
    which = [SESSIONS_ONLY] if sessions_only else []
    if after_exit and hasattr(os, "fork"):
        _fork_waiting_drainer([*argv, project_dir, AFTER_EXIT, *which], niceness)
        return
    arguments = [project_dir, "--niceness", str(niceness), *which]
    argv += arguments
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None:
        _popen_drainer([sys.executable, "-m", "capy.capsules.drain", *arguments], project_dir)
        return
    quiet = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0)  # type: ignore[attr-defined]
        for fd in (0, 1, 2)
    ]
    _SPAWNED.append(spawn(sys.executable, argv, dict(os.environ), file_actions=quiet, setsid=True))


def _fork_waiting_drainer(argv: list[str], niceness: int) -> None:
    """Fork a child that execs `argv` at `niceness` with stdin the read end of a pipe whose
    write end only this process holds (non-inheritable, so the exec closes the child's copy)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only what the exec needs, then nothing of this process runs
        try:
            os.setsid()
            try:
                os.nice(max(0, niceness))
            except OSError:  # refused: the drain still runs, at the caller's priority
                niceness = 0
            os.dup2(read_end, 0)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(read_end)
    _HELD.append(write_end)
    _SPAWNED.append(pid)


def _capy_folder() -> str:
    """The folder that holds the `capy` package, as a Python string literal."""
    import capy

    return repr(os.path.dirname(os.path.dirname(os.path.abspath(capy.__file__))))


def _reap() -> None:
    for pid in list(_SPAWNED):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _SPAWNED.remove(pid)


def _popen_drainer(argv: list[str], project_dir: str) -> None:
    import subprocess

    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=project_dir if os.path.isdir(project_dir) else None,
        start_new_session=True,
        close_fds=True,
    )


def _drainer_running(spool: str) -> bool:
    import fcntl

    try:
        fd = os.open(spool + ".lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _utc_now() -> str:
    from capy.spooling import utc_stamp

    return utc_stamp(time.time())
