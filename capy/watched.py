"""Answers derived from files, kept on disk while every file they came from is unchanged.

A fresh process (every hook, every `capy which`) cannot afford pydantic-settings or a rule-set
validation just to learn a path or a hash. So the slow path writes its answer to one small JSON
entry with the list of every file that went into it and each file's (mtime_ns, size), the same
test Python uses for its .pyc files; a missing file is recorded as missing, so creating it is a
change too. Later processes stat those files and read the entry. Plain strings, not pathlib:
importing pathlib costs more than the whole check.
"""

from __future__ import annotations

import os

from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

# The environment that can change settings or where files are found. Keys are left out: they
# change nothing a cached answer holds, and a cache must never hold them.
ENV_PREFIX = "CAPY_"
ENV_NAMES = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
ENV_SECRETS = ("CAPY_DB_KEY", "CAPY_VAULT_KEY", "CAPY_CAPSULES_KEY")


def data_root() -> str:
    """`capy.config.paths.data_dir()`, without importing pathlib."""
    data_home = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(data_home):  # the XDG spec: a relative value is ignored
        data_home = os.path.join(
            os.environ.get("HOME") or os.path.expanduser("~"), ".local", "share"
        )
    return os.path.join(data_home, "capy")


def cache_dir(name: str) -> str:
    """`capy.config.paths.data_dir() / "cache" / name`, without importing pathlib."""
    return os.path.join(data_root(), "cache", name)


def write_cache_file(path: str, data: bytes) -> bool:
    """Write one cache file under `cache_dir`, atomically and owner-only; False if not written.

    Only into a data folder capy already keeps: a cache written as a process exits must not
    bring back the folder `capy uninstall --data` has just deleted, and a capy that has stored
    nothing yet only goes without the speed. A read-only or full disk costs speed only too.
    """
    from capy.atomicfile import write_atomically

    if not os.path.isdir(data_root()):
        return False
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomically(path, data)
    except (OSError, ValueError):
        return False
    return True


def environment() -> list[list[str]]:
    """The variables an answer may depend on, sorted, without the secrets. Only their values
    are read: `os.environ.items()` decodes every variable's, the keys' among them, and the
    server's store checkout asks on every tool call (61 -> 16 us with 35 variables)."""
    environ = os.environ
    return sorted(
        [name, environ[name]]
        for name in environ
        if (name.startswith(ENV_PREFIX) or name in ENV_NAMES) and name not in ENV_SECRETS
    )


def signature(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_mtime_ns, status.st_size]


def watch_list(paths: Iterable[Path | str]) -> list[list[Any]]:
    unique = dict.fromkeys(str(path) for path in paths)
    return [[path, signature(path)] for path in unique]


def is_fresh(watch: list[list[Any]]) -> bool:
    return bool(watch) and all(signature(path) == recorded for path, recorded in watch)


def read_entry(path: str, cache_format: int) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as stream:
            entry = loads(stream.read())
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("format") == cache_format else None


def read_own_file(path: str) -> bytes | None:
    """The bytes of a cache file that holds code to run (compiled code, pickles), or None when
    it is missing, or someone other than this user owns it or may write to it."""
    try:
        with open(path, "rb") as stream:
            status = os.fstat(stream.fileno())
            if status.st_uid != os.geteuid() or status.st_mode & 0o022:
                return None
            return stream.read()
    except OSError:
        return None


def read_own_marshal_dict(path: str) -> dict[Any, Any] | None:
    """The dict marshalled in a cache file `read_own_file` accepts, or None when the file is
    missing, someone else's, damaged or holds something else."""
    import marshal

    content = read_own_file(path)
    if content is None:
        return None
    try:
        loaded = marshal.loads(content)
    except (ValueError, EOFError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def module_files(prefix: str = "capy") -> list[str]:
    """The source file of every module of package `prefix` loaded in this process: what an
    answer built from their code depends on."""
    import sys

    return sorted(
        module.__file__
        for name, module in list(sys.modules.items())
        if (name == prefix or name.startswith(prefix + "."))
        and isinstance(getattr(module, "__file__", None), str)
    )


def write_entry(path: str, entry: dict[str, Any]) -> None:
    """Best effort and atomic (`write_cache_file`)."""
    write_cache_file(path, dumps(entry, ensure_ascii=False).encode())


# What the rules and settings in force for a project root are read from. Folders count because
# a file added to one changes its mtime. Callers list these before loading anything, so that
# whatever fails, fixing the file invalidates the entry.


def marker_inputs(start: Path, root: Path) -> list[Path]:
    """The project markers from `start` up to its project root: an entry keyed by the working
    directory holds only while no `.git` or `.capy` appears, vanishes or changes on the way."""
    from capy.config.paths import PROJECT_MARKERS

    resolved = start.resolve()
    chain = [resolved, *resolved.parents]
    if root in chain:
        chain = chain[: chain.index(root) + 1]
    return [folder / marker for folder in chain for marker in PROJECT_MARKERS]


def config_inputs(root: Path) -> list[Path]:
    from capy.config import paths

    # The trust store decides whether project files count, so trusting or revoking recompiles.
    return [
        paths.user_config_file(),
        paths.trusted_projects_file(),
        *paths.project_config_files(root),
    ]


def shipped_inputs() -> list[Path]:
    from pathlib import Path

    from capy.rules.resources import shipped_pack_files, shipped_schema_files

    shipped = [Path(str(entry)) for entry in [*shipped_pack_files(), *shipped_schema_files()]]
    return [*sorted({path.parent for path in shipped}), *shipped]


def overlay_inputs(root: Path) -> list[Path]:
    """The overlay folders and files in force; reads the settings (extra_dirs, trust)."""
    from capy.rules.ruleset import files_in, overlay_dirs

    watched: list[Path] = []
    for directory, _origin in overlay_dirs(root):
        watched.append(directory)
        watched.extend(files_in(directory))
    return watched
