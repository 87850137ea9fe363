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
after the mount table was built would be in sight. A folder that holds the working folder,
the temp folder or the home folder is never hidden: the call could not run at all.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from capy.config import paths
from capy.config.names import ENV_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.config.settings import Settings

# What a mount target `{name}` means: one of capy's folders, from its settings.
FOLDERS: dict[str, Callable[[Settings | None], Path]] = {
    "key_dir": lambda settings: settings.key_dir if settings else paths.config_dir(),
    "data_dir": lambda settings: settings.data_dir if settings else paths.data_dir(),
    "config_dir": lambda settings: paths.config_dir(),
}
# The variables that move these folders (beside the config files, read once): the home, the
# XDG folders, and the folder settings themselves.
_ENV_NAMES = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    *(f"{ENV_PREFIX}{setting.upper()}" for setting in ("data_dir", "key_dir")),
)
_resolved: dict[tuple, tuple[str, ...]] = {}
_CACHE_SIZE = 8


def placeholder(target: str) -> str | None:
    """The folder name of a `{name}` target; None for a plain path."""
    if target.startswith("{") and target.endswith("}"):
        return target[1:-1]
    return None


def resolve(names: tuple[str, ...]) -> tuple[str, ...]:
    """The folders `names` stand for here, one per name ("" where one must stay in sight)."""
    if not names:
        return ()
    key = (names, _environment(), _cwd())
    found = _resolved.get(key)
    if found is None:
        settings = _settings()
        found = tuple(_hideable(FOLDERS[name](settings)) for name in names)
        if len(_resolved) >= _CACHE_SIZE:
            _resolved.clear()
        _resolved[key] = found
    return found


def _environment() -> tuple[str | None, ...]:
    # A few lookups: walking all of os.environ decodes every name, ~0.3 ms a call.
    return tuple(map(os.environ.get, _ENV_NAMES))


def _cwd() -> str:
    try:
        return os.getcwd()
    except FileNotFoundError:
        return ""


def _settings() -> Settings | None:
    """capy's settings; None where they cannot be read (the folders' defaults are used)."""
    from capy.config import ConfigError, load_settings

    try:
        return load_settings().settings
    except (ConfigError, OSError):
        return None


def _hideable(folder: Path) -> str:
    """`folder` made absolute and present; "" if hiding it would hide what a call needs."""
    folder = Path(os.path.abspath(folder))
    needed = [Path(tempfile.gettempdir()), paths.home_dir()]
    if cwd := _cwd():
        needed.append(Path(cwd))
    for path in needed:
        path = Path(os.path.abspath(path))
        if path == folder or folder in path.parents:
            return ""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return str(folder) if folder.is_dir() else ""
    return str(folder)
