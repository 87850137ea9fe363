"""The code `@dataclass` compiles, kept on disk between processes.

`@dataclass` writes the source of a class's `__init__`, `__repr__`, `__eq__` and the rest as
text and compiles it when the class is created: about half a millisecond a class, and a warm
`capy search` or a hook creates thirty and more, which is a bare Python start again. The text is
all that goes into the compiled code, so the code is kept in one marshal file per interpreter
build, looked up by the very text it was compiled from: an entry can never stand for any other
source, and a new Python (whose marshal format and bytecode may differ) has a file of its own.

The file is read only when it belongs to this user and nobody else may write it (it holds code
that runs), and written back, best effort, when a process compiled something new. The objects
`exec` then makes from the code are exactly what `@dataclass` would have made.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Past this many entries the file starts again: each capy version's classes add theirs.
MAX_ENTRIES = 4096
_codes: dict[str, Any] = {}
_new: list[str] = []


def install() -> None:
    """Route `@dataclass`'s compiling through the cache, from now on in this process."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _cached_exec:
        return
    _codes.update(_load(cache_path()))
    # dataclasses calls `exec(text, globals, namespace)` by its global name: a module attribute
    # of that name comes before the builtin.
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]
    import atexit

    atexit.register(_save)


def cache_path() -> str:
    from capy.watched import cache_dir

    build = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-O{sys.flags.optimize}"
    return os.path.join(cache_dir("code"), f"dataclasses-{build}.marshal")


def _cached_exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    if isinstance(source, str):
        code = _codes.get(source)
        if code is None:
            # What `exec` of the text in dataclasses compiles: its file name, and no future
            # flags (dataclasses has none; this module's must not leak in).
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _codes[source] = code
            _new.append(source)
        source = code
    exec(source, globals, locals)


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as stream:
            status = os.fstat(stream.fileno())
            if status.st_uid != os.geteuid() or status.st_mode & 0o022:
                return {}  # code someone else could have written never runs
            loaded = marshal.loads(stream.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    code_type = type(_load.__code__)
    return {
        text: code
        for text, code in loaded.items()
        if isinstance(text, str) and isinstance(code, code_type)
    }


def _save() -> None:
    if not _new:
        return
    from capy.hooks.state import write_atomically

    path = cache_path()
    # Another process may have added entries meanwhile: keep them.
    merged = {**_load(path), **_codes} if len(_codes) < MAX_ENTRIES else dict(_codes)
    if len(merged) > MAX_ENTRIES:
        merged = {text: _codes[text] for text in _new}
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomically(path, marshal.dumps(merged))
    except (OSError, ValueError):
        return  # a read-only or full disk costs speed only
    _new.clear()
