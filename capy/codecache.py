"""What the interpreter compiles again in every process, kept on disk: the code `@dataclass`
generates and the programs of regular expressions.

`@dataclass` writes the source of a class's `__init__`, `__repr__`, `__eq__` and the rest as
text and compiles it when the class is created: about half a millisecond a class. `re.compile`
parses a pattern and assembles its program in pure Python. A warm `capy search` or `stats`
creates thirty and more classes and compiles forty and more patterns, which together cost more
than a bare Python start. (Not installed for a hook: its lean path imports no dataclasses, and
this module would.) Both results are a function of their input text alone, so each is
kept in one marshal file per interpreter build, looked up by that very text (and, for a regex,
its flags): an entry can never stand for any other input, and another Python (whose bytecode,
marshal format or regex engine may differ) has a file of its own. Only patterns compiled while
a module is imported are written (capy's and its libraries' own): a pattern compiled later may
be built from a query or a file's content, which must never reach the disk unencrypted.

The file is read only when it belongs to this user and nobody else may write it (it holds code
that runs), and written back, best effort, when a process compiled something new. What is made
from an entry is what the interpreter would have made: the same code object runs, and the same
regex program is handed to the same engine call. Each entry's value is kept marshalled on its
own and read only when looked up: the file holds what every command of capy compiled (some
seven hundred entries), of which one command uses a tenth.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

# Past this many entries a map starts again: each capy version's classes and patterns add theirs.
MAX_ENTRIES = 4096
# The regex half relies on the engine's internals as they are in these versions (`re._compiler`
# and `_sre.compile`); elsewhere patterns compile as usual.
REGEX_VERSIONS = ((3, 11), (3, 12))
# 2: each value marshalled on its own (1 held them inline, and every process read them all).
FILE_FORMAT = 2
# name -> {key: the value, marshalled}; what this process took out of them, by key.
_maps: dict[str, dict[Any, bytes]] = {"dataclasses": {}, "regex": {}}
_ready: dict[str, dict[Any, Any]] = {"dataclasses": {}, "regex": {}}
_new: list[tuple[str, Any]] = []


def install() -> None:
    """Route `@dataclass`'s and `re`'s compiling through the cache, from now on in this
    process."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _cached_exec:
        return
    for name, entries in _load(cache_path()).items():
        _maps[name].update(entries)
    # dataclasses calls `exec(text, globals, namespace)` by its global name: a module attribute
    # of that name comes before the builtin.
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]
    if sys.version_info[:2] in REGEX_VERSIONS:
        import re

        _regex_engine.extend([re._compiler, re._compiler.compile])  # type: ignore[attr-defined]
        re._compiler.compile = _cached_regex  # type: ignore[attr-defined]
    import atexit

    atexit.register(_save)


def cache_path() -> str:
    from capy.watched import cache_dir

    build = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-O{sys.flags.optimize}"
    return os.path.join(cache_dir("code"), f"compiled-v{FILE_FORMAT}-{build}.marshal")


def _entry(name: str, key: Any, valid: Callable[[Any], bool]) -> Any:
    """The value cached under `key`, or None when there is none or it is not what `valid`
    accepts (a damaged or foreign entry is compiled afresh)."""
    ready = _ready[name]
    value = ready.get(key)
    if value is None:
        blob = _maps[name].get(key)
        if blob is None:
            return None
        try:
            value = marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            return None
        if not valid(value):
            return None
        ready[key] = value
    return value


def _remember(name: str, key: Any, value: Any) -> None:
    try:
        blob = marshal.dumps(value)
    except ValueError:  # an entry marshal cannot write costs speed only
        return
    _ready[name][key] = value
    _maps[name][key] = blob
    _new.append((name, key))


# --- dataclasses ------------------------------------------------------------------------------


def _cached_exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    if isinstance(source, str):
        code = _entry("dataclasses", source, _is_code)
        if code is None:
            # What `exec` of the text in dataclasses compiles: its file name, and no future
            # flags (dataclasses has none; this module's must not leak in).
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _remember("dataclasses", source, code)
        source = code
    exec(source, globals, locals)


# --- regular expressions ----------------------------------------------------------------------

_regex_engine: list[Any] = []  # re._compiler, and its own compile


def _cached_regex(pattern: Any, flags: int = 0) -> Any:
    """`re._compiler.compile`, its parse and assembly taken from the cache: the arguments it
    would hand `_sre.compile` for this pattern and these flags."""
    compiler, original = _regex_engine
    if not isinstance(pattern, str | bytes) or flags & compiler.SRE_FLAG_DEBUG:
        return original(pattern, flags)
    key = (pattern, flags)
    arguments = _entry("regex", key, _is_regex_arguments)
    if arguments is None:
        arguments = _regex_arguments(compiler, pattern, flags)
        if _trusted or _importing():
            _remember("regex", key, arguments)
    return compiler._sre.compile(pattern, *arguments)


def compile_trusted(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile` of a pattern from capy's own code or its rule packs (which the compiled
    rules cache keeps on disk already), never one made from a query or a file's content: its
    program may be written down like those compiled while a module is imported."""
    import re

    _trusted.append(True)
    try:
        return re.compile(pattern, flags)
    finally:
        _trusted.pop()


_trusted: list[bool] = []


def _importing() -> bool:
    """Whether a module is being imported: only a pattern compiled then is written down. Such
    a pattern is capy's or a library's own; one compiled later may be made from what a person
    searched for or a file held, which must never land on disk in the clear."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == _IMPORT_MACHINERY:
            return True
        frame = frame.f_back
    return False


_IMPORT_MACHINERY = "<frozen importlib._bootstrap>"


def _regex_arguments(compiler: Any, pattern: Any, flags: int) -> tuple[Any, ...]:
    """What `re._compiler.compile` passes `_sre.compile` after the pattern (Python 3.11, 3.12)."""
    parsed = compiler._parser.parse(pattern, flags)
    code = [int(item) for item in compiler._code(parsed, flags)]  # opcodes are int subclasses
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        flags | parsed.state.flags,
        code,
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


# --- the file ---------------------------------------------------------------------------------


def _load(path: str) -> dict[str, dict[Any, bytes]]:
    """The file's entries, their values still marshalled (checked when one is looked up)."""
    from capy.watched import read_own_file

    content = read_own_file(path)  # code someone else could have written never runs
    if content is None:
        return {}
    try:
        loaded = marshal.loads(content)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    found: dict[str, dict[Any, bytes]] = {}
    codes = loaded.get("dataclasses")
    if isinstance(codes, dict):
        found["dataclasses"] = {
            text: blob
            for text, blob in codes.items()
            if isinstance(text, str) and isinstance(blob, bytes)
        }
    regexes = loaded.get("regex")
    if isinstance(regexes, dict):
        found["regex"] = {
            key: blob
            for key, blob in regexes.items()
            if _is_regex_key(key) and isinstance(blob, bytes)
        }
    return found


def _is_code(value: Any) -> bool:
    return isinstance(value, type(_is_code.__code__))


def _is_regex_key(key: Any) -> bool:
    return isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str | bytes)


def _is_regex_arguments(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 5 and isinstance(value[1], list)


def _save() -> None:
    if not _new:
        return
    from capy.watched import write_cache_file

    path = cache_path()
    on_disk = _load(path)  # another process may have added entries meanwhile: keep them
    merged: dict[str, dict[Any, bytes]] = {}
    for name, entries in _maps.items():
        both = {**on_disk.get(name, {}), **entries}
        if len(both) > MAX_ENTRIES:
            both = {key: entries[key] for kind, key in _new if kind == name}
        merged[name] = both
    if write_cache_file(path, marshal.dumps(merged)):
        _new.clear()
