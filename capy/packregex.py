"""Regular expressions from rule packs for a hook process, without importing `re`.

`import re` costs a hook more than half a bare interpreter start (it brings `enum`,
`functools` and `collections`), and compiling a pattern runs its parser and assembler in pure
Python. Neither is needed to match: the engine is `_sre`, built into the interpreter, and what
`re.compile` hands it for a pattern (the opcode program, group count and names) depends on the
pattern text, its flags and the interpreter build alone. So the first process that meets a
pattern compiles it with `re` and keeps those arguments in a file per interpreter build; later
processes give them straight to `_sre.compile` and get the same pattern object `re` would.
Fnmatch globs are kept the same way, with the regex `fnmatch.translate` makes of them.

Only patterns from rule packs, settings and capy's own code come here (the callers' contract),
never one made from a payload, a query or a file's content: the file is written in the clear.
It is read only when this user owns it and nobody else may write it, since `_sre` would run
what it holds. On an interpreter whose `re` internals are not the ones known here, everything
goes through `re`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The `re._compiler` interface the arguments are taken from (capy.codecache relies on it too).
KNOWN_VERSIONS = ((3, 11), (3, 12))
FILE_FORMAT = 2  # 2: each program marshalled on its own
# Past this many programs the file starts again: each pack change adds its patterns.
MAX_PROGRAMS = 4096

# Each program is kept marshalled on its own: a hook unmarshals the few it uses, not all.
_programs: dict[tuple[str, str, int], bytes] | None = None
_compiled: dict[tuple[str, str, int], Any] = {}
_new: list[tuple[str, str, int]] = []


def pack_regex(pattern: str, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)` for a pattern from a rule pack, settings or capy's code."""
    return _get(("regex", pattern, flags))


def pack_glob(pattern: str) -> Any:
    """The compiled `fnmatch.translate(pattern)`: `.match(name)` is `fnmatchcase(name, pattern)`."""
    return _get(("glob", pattern, 0))


def glob_matches(name: str, pattern: str) -> bool:
    return pack_glob(pattern).match(name) is not None


def _get(key: tuple[str, str, int]) -> Any:
    found = _compiled.get(key)
    if found is None:
        found = _compiled[key] = _build(key)
    return found


def _build(key: tuple[str, str, int]) -> Any:
    kind, pattern, flags = key
    if sys.version_info[:2] not in KNOWN_VERSIONS:
        return _with_re(kind, pattern, flags)
    import marshal

    programs = _loaded()
    stored = programs.get(key)
    if stored is not None:
        import _sre

        try:
            return _sre.compile(*marshal.loads(stored))
        except (TypeError, ValueError, EOFError, RuntimeError):  # damaged: compile it again
            pass
    import re

    source = _source(kind, pattern)
    compiled = re.compile(source, flags)
    programs[key] = marshal.dumps((source, *_arguments(source, flags)))
    _new.append(key)
    return compiled


def _source(kind: str, pattern: str) -> str:
    if kind == "glob":
        from fnmatch import translate

        return translate(pattern)
    return pattern


def _with_re(kind: str, pattern: str, flags: int) -> Any:
    import re

    return re.compile(_source(kind, pattern), flags)


def _arguments(source: str, flags: int) -> tuple[Any, ...]:
    import re

    from capy.codecache import _regex_arguments

    return _regex_arguments(re._compiler, source, flags)  # type: ignore[attr-defined]


# --- the file ---------------------------------------------------------------------------------


def programs_path() -> str:
    import _sre
    import os

    from capy.watched import cache_dir

    build = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{_sre.MAGIC}"
    return os.path.join(cache_dir("hooks"), f"regex-{FILE_FORMAT}-{build}.marshal")


def _loaded() -> dict[tuple[str, str, int], bytes]:
    global _programs
    if _programs is None:
        _programs = _read(programs_path())
    return _programs


def _read(path: str) -> dict[tuple[str, str, int], bytes]:
    from capy.watched import read_own_marshal_dict

    loaded = read_own_marshal_dict(path) or {}
    return {key: value for key, value in loaded.items() if _entry(key, value)}


def _entry(key: Any, value: Any) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 3
        and key[0] in ("regex", "glob")
        and isinstance(key[1], str)
        and isinstance(key[2], int)
        and isinstance(value, bytes)
    )


def save() -> None:
    """Write the programs this process compiled (merged with what others wrote meanwhile);
    best effort: a read-only or full disk costs speed only."""
    if not _new or _programs is None:
        return
    import marshal

    from capy.watched import write_cache_file

    path = programs_path()
    merged = {**_read(path), **_programs}
    if len(merged) > MAX_PROGRAMS:
        merged = {key: _programs[key] for key in _new}
    try:
        data = marshal.dumps(merged)
    except ValueError:
        return
    if write_cache_file(path, data):
        _new.clear()
