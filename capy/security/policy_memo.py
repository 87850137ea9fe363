"""The parsed permission rules of one project, kept per process while their files stay put.

A long-lived server judges every `capy_execute` against the settings files; reading and parsing
them on each call cost more than running `echo hi`. The parse is reused while every settings
file keeps its inode, size, mtime and ctime (ctime: a chmod that makes an unreadable file
readable is a change too), as the compiled-rules key does (`capy.rules.cache`), and while the
set of files (present or not, drop-ins included) is the same. A change therefore takes effect on
the very next call.

Timestamps are coarse (a kernel tick): two same-size writes to one file within a tick can leave
its stamp unchanged. So a stamp is trusted only once the file has been still for a while (the
"racy timestamp" rule git's index uses); until then every call reads the file again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from capy.security.policy import Policy
    from capy.security.settings_files import SettingsFile

# A stamp younger than this may hide a second write within the same timestamp tick.
RACY_WINDOW_NS = 2_000_000_000
_MEMO: dict[tuple, Policy] = {}
_PLACES: dict[tuple, tuple[object, str | None, Stamp, Any]] = {}
_MEMO_SIZE = 16  # projects one process judges for; a CLI or a server sees one or two

Stamp = tuple[int, int, int, int] | None
T = TypeVar("T")


def file_stamp(path: str) -> Stamp:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def remembered_policy(
    scope: tuple, files: Sequence[SettingsFile], parse: Callable[[], Policy]
) -> Policy:
    """The policy `parse` builds from `files`, reused while their stamps hold.

    `scope` holds everything else the parse depends on (working directory, home). A copy is
    returned, so a caller that adds to its policy cannot change what the next call sees.
    """
    stamps = tuple((str(f.path), f.scope, str(f.root), file_stamp(str(f.path))) for f in files)
    key = (scope, stamps)
    found = _MEMO.get(key)
    if found is None:
        found = parse()
        if _settled(stamps):
            if len(_MEMO) >= _MEMO_SIZE:
                _MEMO.pop(next(iter(_MEMO)))
            _MEMO[key] = found
    return _copy(found)


def remembered_places(
    key: tuple, ruleset: object, locate: Callable[[], tuple[T, Path | None]]
) -> T:
    """Where a project's settings files are (`locate`'s first value), reused while the folder
    it names second (the managed drop-ins, whose listing adds files) keeps its stamp.

    Finding them resolves the project's path and root and reads the platforms pack: more than
    the stat calls that check the files themselves. The project's root is kept as found, as a
    server's workspace keeps it for its life. `key` holds the paths asked about; the
    entry holds `ruleset` (where the locations come from) so its id is never another's.
    """
    found = _PLACES.get((key, id(ruleset)))
    if found is not None:
        owner, folder, stamp, places = found
        if owner is ruleset and (folder is None or file_stamp(folder) == stamp):
            return places
    places, drop_ins = locate()
    folder = None if drop_ins is None else str(drop_ins)
    stamp = None if folder is None else file_stamp(folder)
    if stamp is None or time.time_ns() - stamp[3] > RACY_WINDOW_NS:
        if len(_PLACES) >= _MEMO_SIZE:
            _PLACES.pop(next(iter(_PLACES)))
        _PLACES[(key, id(ruleset))] = (ruleset, folder, stamp, places)
    return places


def _settled(stamps: tuple) -> bool:
    newest = max((stamp[3][3] for stamp in stamps if stamp[3] is not None), default=0)
    return time.time_ns() - newest > RACY_WINDOW_NS


def _copy(policy: Policy) -> Policy:
    from dataclasses import replace

    return replace(
        policy,
        rules=list(policy.rules),
        unreadable=list(policy.unreadable),
        warnings=list(policy.warnings),
    )


def forget_policies() -> None:
    """Drop every remembered parse (tests, and a process that knows its files changed)."""
    _MEMO.clear()
    _PLACES.clear()
