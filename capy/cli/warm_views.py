"""Ready-made pack views for a warm CLI start (capy.cli.warm), kept on disk.

Building the plain views a warm `capy search` reads (search, secrets, retention) from the
compiled rules cost it more than its search: parsing the whole merged rule set (some 350 KB of
JSON), dropping disabled rules, and filling some four hundred view objects field by field. A
view is a function of that rule set and of capy's code only, so the first warm process writes
each view it built as a pickle, and later ones load it instead.

An entry is keyed by the compiled-rules key (capy's version and the bytes of every pack,
schema and overlay in force) and the view's name, and lists the source file of every capy
module the writing process had loaded, with its mtime and size: an edited view class or
validator is a miss. Only plain views are written and read (pydantic's pickle differently),
only from a file this user owns and nobody else may write (unpickling runs code), and an entry
that cannot be read back whole is a miss.
"""

from __future__ import annotations

import os
import sys

from capy import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# 1: {"format", "capy", "python", "watch", "view": the pickled view}.
CACHE_FORMAT = 1
KEEP_ENTRIES = 32


def load_view(rules_key: str, name: str) -> Any | None:
    from capy.rules.views import plain
    from capy.watched import is_fresh, read_own_file

    if not plain.enabled():
        return None
    content = read_own_file(_path(rules_key, name))
    if content is None:
        return None
    loads = _loads()
    try:
        entry = loads(content)
        if (
            entry["format"] != CACHE_FORMAT
            or entry["capy"] != __version__
            or entry["python"] != sys.hexversion
            or not is_fresh(entry["watch"])
        ):
            return None
        return loads(entry["view"])
    except Exception:  # an entry from another capy, or damaged: build the view instead
        return None


def store_view(rules_key: str, name: str, view: Any) -> None:
    """Best effort: a read-only or full disk costs speed only. `view` must be freshly built
    (nothing computed and cached on it yet)."""
    import pickle

    from capy.rules.views import plain
    from capy.watched import module_files, watch_list

    if not plain.enabled():
        return
    try:
        entry = {
            "format": CACHE_FORMAT,
            "capy": __version__,
            "python": sys.hexversion,
            "watch": watch_list(module_files()),
            "view": pickle.dumps(view, protocol=pickle.HIGHEST_PROTOCOL),
        }
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    from capy.watched import write_cache_file

    path = _path(rules_key, name)
    if write_cache_file(path, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)):
        _prune(os.path.dirname(path))


def _loads() -> Any:
    """pickle's loader: the C one itself where there is one, without pickle.py (a fifth of a
    bare start to import; `pickle.loads` is this very function)."""
    try:
        from _pickle import loads
    except ImportError:
        from pickle import loads
    return loads


def _path(rules_key: str, name: str) -> str:
    from capy.watched import cache_dir

    return os.path.join(cache_dir("views"), f"{rules_key[:32]}-{name}.pickle")


def _prune(folder: str) -> None:
    """Keep the newest entries: each edit of an overlay or of capy leaves old ones behind."""
    try:
        paths = [os.path.join(folder, item) for item in os.listdir(folder)]
        paths.sort(key=os.path.getmtime, reverse=True)
        for stale in paths[KEEP_ENTRIES:]:
            os.unlink(stale)
    except OSError:
        return
