"""capy's own folders, out of a call's sight: its keys, its config and its stores.

A call runs as capy's user, so without more it could read capy's generated key files (under
the user's config folder) and the encrypted stores beside them (under its data folder), and
open every store capy keeps. The executor pack names these folders by setting (`{key_dir}`,
`{data_dir}`, `{config_dir}`) as targets of the call's own mounts; this module resolves them
from capy's settings, and `isolation` mounts an empty read-only tmpfs over each before any of
the call's code runs. So `capy` run inside a call finds no key and no store: it cannot reach
capy's memory, by design.

A folder is resolved once per process for each working folder and value of the variables
that move it (a settings load reads every config file, ~0.5 ms, too much for every call), and
made if missing (0700, as capy would make it at its first key): a folder that appeared only
after the mount table was built would be in sight. Paths are compared real (symlinks
resolved), as the kernel mounts them. A folder that holds the working folder, the temp folder
or the home folder is never hidden (the call could not run at all): it is reported as in
sight, and where the pack requires isolation every call is refused. Where the settings cannot
be read, the folders come from the variables that move them, and the error is reported alike.

The mounts are made by path at each call's start, so a call that renamed a hidden folder's
parent (and left an empty decoy at the old path) would have the next calls hide the decoy
while the real folder sat in sight at its new path. So the identity (device, inode) of each
folder and of every parent up to `/` is recorded the first time its configured path is
resolved in this process, and checked before each call (a few `lstat`s, microseconds): where
any differs, every call is refused until capy restarts (ready spawners made meanwhile could
have hidden the decoy), never run with the folder in sight.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capy.config import paths
from capy.config.names import ENV_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.config.settings import Settings

# What a mount target `{name}` means: one of capy's folders, from its settings (or, where
# they cannot be read, from the variables that move it: a broken config file must not put
# a configured folder back in sight).
FOLDERS: dict[str, Callable[[Settings | None], Path]] = {
    "key_dir": lambda settings: settings.key_dir if settings else _from_env("key_dir"),
    "data_dir": lambda settings: settings.data_dir if settings else _from_env("data_dir"),
    "config_dir": lambda settings: paths.config_dir(),
}
_DEFAULTS: dict[str, Callable[[], Path]] = {"key_dir": paths.config_dir, "data_dir": paths.data_dir}
# Store files configured by their own setting: outside the hidden folders they stay in sight.
_STORE_FILES = ("db_path", "vault_path", "capsules_path")
# The variables that move these folders and files (beside the config files, read once): the
# home, the XDG folders, and the settings themselves.
_ENV_NAMES = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    *(f"{ENV_PREFIX}{setting.upper()}" for setting in ("data_dir", "key_dir", *_STORE_FILES)),
)


@dataclass(frozen=True)
class Folders:
    """Where capy's folders named by the pack are here, and what stays in a call's sight."""

    paths: tuple[str, ...]  # one per name, real (symlinks resolved); "" where it stays in sight
    # Sentences: why a folder stays in sight, or why the settings could not be read. Where
    # the pack requires isolation, a call is refused for any of them.
    in_sight: tuple[str, ...] = ()
    # Sentences: encrypted store files configured outside the hidden folders (their keys are
    # hidden, the files are not).
    exposed: tuple[str, ...] = ()
    # The identity recorded of each hidden folder (see `_Record`), checked before each call.
    records: tuple[_Record, ...] = ()
    # Why no call may run: a hidden folder is no longer what capy first hid (None: it is).
    moved: str | None = None


@dataclass
class _Record:
    """A hidden folder as first resolved in this process: its real path, and the (path,
    device, inode) of each parent from the top down and of the folder itself."""

    name: str
    path: str
    chain: tuple[tuple[str, int, int], ...]
    moved: str | None = None  # once set, kept: calls stay refused until capy restarts

    def check(self) -> str | None:
        if self.moved is None:
            for path, device, inode in self.chain:
                if _identity(path) != (device, inode):
                    self.moved = _moved_sentence(self.name, self.path, path)
                    break
        return self.moved


# Configured folder path -> its record, for the life of the process (never cleared: a later
# resolution must compare against the folder capy first hid, not the one now at its path).
_records: dict[str, _Record] = {}


_resolved: dict[tuple, Folders] = {}
_CACHE_SIZE = 8


def placeholder(target: str) -> str | None:
    """The folder name of a `{name}` target; None for a plain path."""
    if target.startswith("{") and target.endswith("}"):
        return target[1:-1]
    return None


def resolve(names: tuple[str, ...]) -> Folders:
    """The folders `names` stand for here, one per name ("" where one must stay in sight)."""
    if not names:
        return Folders(())
    key = (names, _environment(), _cwd())
    found = _resolved.get(key)
    if found is None:
        found = _resolve(names)
        if len(_resolved) >= _CACHE_SIZE:
            _resolved.clear()
        _resolved[key] = found
    for record in found.records:
        if why := record.check():
            return dataclasses.replace(found, moved=why)
    return found


def _resolve(names: tuple[str, ...]) -> Folders:
    settings, error = _settings()
    in_sight = [] if error is None else [error]
    found = []
    records = []
    for name in names:
        configured = FOLDERS[name](settings)
        folder, why = _hideable(configured)
        found.append(folder)
        if why:
            in_sight.append(f"capy's {name.replace('_', ' ')} {why}")
        elif record := _record(name, str(configured), folder):
            records.append(record)
    hidden = [Path(folder) for folder in found if folder]
    exposed = []
    for setting in _STORE_FILES:
        path = getattr(settings, setting, None)
        if path is not None and not _inside_any(Path(os.path.realpath(path)), hidden):
            exposed.append(
                f"the store file `{setting}` ({path}) lies outside capy's hidden folders: a "
                "call can read it (it stays encrypted; its key is hidden)"
            )
    # One check for a folder named twice (the key folder is the config folder by default).
    unique = {(record.path, record.chain, record.moved): record for record in records}
    return Folders(
        tuple(found), tuple(dict.fromkeys(in_sight)), tuple(exposed), tuple(unique.values())
    )


def _record(name: str, configured: str, folder: str) -> _Record | None:
    """The record of `configured` (made now, the first time); None where a part of its path
    cannot be read (nothing to compare later; the mount then reports its own failure)."""
    record = _records.get(configured)
    if record is None:
        chain = []
        for path in (*reversed(Path(folder).parents[:-1]), Path(folder)):
            identity = _identity(str(path))
            if identity is None:
                return None
            chain.append((str(path), *identity))
        record = _records[configured] = _Record(name, folder, tuple(chain))
    elif record.path != folder and record.moved is None:  # now leads elsewhere (a new link)
        record.moved = _moved_sentence(name, record.path, configured)
    return record


def moved_holding(path: str | os.PathLike[str]) -> str | None:
    """Why capy itself must not read or make a file at `path` (a key): it lies in one of the
    hidden folders, which moved since this process first hid it, so `path` may now be in a
    decoy a call left; None otherwise (or where no folder was ever hidden here)."""
    text = os.path.abspath(path)
    real = os.path.realpath(text)
    for configured, record in list(_records.items()):
        inside = _inside_any(Path(text), [Path(os.path.abspath(configured))])
        if (inside or _inside_any(Path(real), [Path(record.path)])) and (why := record.check()):
            return why
    return None


def holding(folders: Folders, path: str | os.PathLike[str]) -> str | None:
    """The hidden folder of `folders` that holds `path` (real paths), if any."""
    real = Path(os.path.realpath(path))
    return next(
        (found for found in folders.paths if found and _inside_any(real, [Path(found)])), None
    )


def _identity(path: str) -> tuple[int, int] | None:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _moved_sentence(name: str, folder: str, changed: str) -> str:
    return (
        f"capy's {name.replace('_', ' ')} {folder} is no longer the folder capy hid from calls "
        f"when it started ({changed} was moved or replaced, perhaps by a call), so no call runs "
        "rather than one that could find capy's keys or stores in their new place; check that "
        "folder, then restart capy."
    )


def _inside_any(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def _from_env(name: str) -> Path:
    value = os.environ.get(f"{ENV_PREFIX}{name.upper()}")
    return Path(os.path.expanduser(value)) if value else _DEFAULTS[name]()


def _environment() -> tuple[str | None, ...]:
    # A few lookups: walking all of os.environ decodes every name, ~0.3 ms a call.
    return tuple(map(os.environ.get, _ENV_NAMES))


def _cwd() -> str:
    try:
        return os.getcwd()
    except FileNotFoundError:
        return ""


def _settings() -> tuple[Settings | None, str | None]:
    """capy's settings, or None and why they cannot be read (the folders then come from the
    variables that move them, or their defaults)."""
    from capy.config import ConfigError, load_settings

    try:
        return load_settings().settings, None
    except (ConfigError, OSError) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, (
            f"capy's settings could not be read ({detail}), so its folders were taken from "
            f"{ENV_PREFIX}KEY_DIR, {ENV_PREFIX}DATA_DIR or their defaults"
        )


def _hideable(folder: Path) -> tuple[str, str | None]:
    """`folder` made real and present, or "" and why hiding it would hide what a call needs.
    Real paths on both sides: a symlinked folder is mounted over where it leads."""
    folder = Path(os.path.realpath(folder))
    needed = {"the temp folder": tempfile.gettempdir(), "the home folder": str(paths.home_dir())}
    if cwd := _cwd():
        needed["the working folder"] = cwd
    for what, path in needed.items():
        path = Path(os.path.realpath(path))
        if path == folder or folder in path.parents:
            return "", f"{folder} stays in sight of calls: it holds {what} ({path})"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        if folder.is_dir():
            return str(folder), None
        return "", f"{folder} could not be made ({error.strerror}), so it cannot be hidden"
    return str(folder), None
