"""capy.codecache: `@dataclass` code and regex programs from disk are what the interpreter
compiles, and only a file of this user's that nobody else can write is ever run. Real processes,
real files."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

# A module whose patterns are compiled while it is imported, as capy's own are.
PATTERNS = r"""
import re
found = re.compile(r"(?i)(?P<key>token)[=:]\s*(?P<value>[a-z0-9]{4,})\b(?#capy-test)")
controls = re.compile(rb"[\x00-\x1f]+(?#capy-test)")
"""
# A process that installs the cache, makes a dataclass, uses those patterns, and compiles one
# from data at run time (a query, say), which must not be written down.
PROGRAM = r"""
import capy.codecache as cache
cache.install()
from dataclasses import dataclass, field

@dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int = 2
    tags: tuple = field(default=(), compare=False)

p = Point(1)
print(p, p == Point(1, 2, ("a",)), p < Point(2), hash(p) == hash(Point(1)))
print(Point.__init__.__code__.co_filename, Point.__init__.__annotations__)
import re, sys
sys.path.insert(0, sys.argv[1])
from capy_test_patterns import controls, found
print(found.search("x TOKEN: ab12cd").groupdict(), found.flags, found.groups)
print(controls.sub(b"?", b"a\x01\x02b"))
query = "ghp_" + "Q" * 36
print(re.compile(re.escape(query) + "|capy-runtime").search("capy-runtime") is not None)
"""


def run(home: Path, *, capy_has_data: bool = True) -> subprocess.CompletedProcess:
    environ = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    if capy_has_data:  # the cache is written only where capy already keeps its data
        (home / "data" / "capy").mkdir(parents=True, exist_ok=True)
    (home / "capy_test_patterns.py").write_text(PATTERNS, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, str(home)],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )


def cache_file(home: Path) -> Path:
    files = list((home / "data" / "capy" / "cache" / "code").glob("compiled-*.marshal"))
    assert len(files) == 1
    return files[0]


def test_a_second_process_runs_the_cached_code_with_the_same_result(tmp_path: Path) -> None:
    first = run(tmp_path)
    stored = marshal.loads(cache_file(tmp_path).read_bytes())["dataclasses"]
    assert any("def __init__(self,x:_type_x,y:_type_y=_dflt_y" in text for text in stored)
    for text, code in stored.items():  # what dataclasses' own `exec` of the text compiles
        assert marshal.loads(code) == compile(text, "<string>", "exec", dont_inherit=True)
    assert first.stdout.splitlines()[0] == "Point(x=1, y=2, tags=()) True True True"
    # `from __future__ import annotations` in capy.codecache must not turn these into strings.
    assert "<class 'int'>" in first.stdout
    second = run(tmp_path)
    assert second.stdout == first.stdout
    assert "{'key': 'TOKEN', 'value': 'ab12cd'} 34 2" in first.stdout


@pytest.mark.skipif(
    sys.version_info[:2] not in ((3, 11), (3, 12)),
    reason="regex programs are cached on 3.11 and 3.12 only",
)
def test_a_cached_regex_program_is_what_the_engine_is_handed(tmp_path: Path) -> None:
    run(tmp_path)
    stored = marshal.loads(cache_file(tmp_path).read_bytes())["regex"]
    ours = {
        key: marshal.loads(value) for key, value in stored.items() if b"capy-test" in _bytes(key[0])
    }
    assert len(ours) == 2
    # Compiled at run time from data: used, never written down.
    assert not [key for key in stored if b"capy-runtime" in _bytes(key[0])]
    assert b"QQQQ" not in cache_file(tmp_path).read_bytes()
    compiler, handed = re._compiler, []  # type: ignore[attr-defined]
    engine = compiler._sre
    recorder = SimpleNamespace(**{name: getattr(engine, name) for name in dir(engine)})
    recorder.compile = lambda pattern, *arguments: handed.append(arguments)
    compiler._sre = recorder
    try:
        for (pattern, flags), arguments in ours.items():
            handed.clear()
            compiler.compile(pattern, flags)  # the engine's own parse and assembly
            assert handed == [arguments]
    finally:
        compiler._sre = engine


def _bytes(pattern: str | bytes) -> bytes:
    return pattern if isinstance(pattern, bytes) else pattern.encode()


def test_a_file_another_user_could_write_is_not_run(tmp_path: Path) -> None:
    run(tmp_path)
    path = cache_file(tmp_path)
    stored = marshal.loads(path.read_bytes())
    raises = compile("raise SystemExit(7)", "<s>", "exec")
    poisoned = marshal.dumps(
        {**stored, "dataclasses": dict.fromkeys(stored["dataclasses"], marshal.dumps(raises))}
    )
    path.write_bytes(poisoned)
    path.chmod(0o666)
    assert "Point(x=1" in run(tmp_path).stdout  # not run; compiled afresh and written back
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_bytes(poisoned)  # the same file, private: this user's own, so it is run
    with pytest.raises(subprocess.CalledProcessError) as raised:
        run(tmp_path)
    assert raised.value.returncode == 7


def test_an_unreadable_or_foreign_file_is_ignored(tmp_path: Path) -> None:
    run(tmp_path)
    path = cache_file(tmp_path)
    shapes = (
        {"x": 1},
        {"dataclasses": [1]},
        {"regex": {("a", 0): (1, 2)}, "dataclasses": {}},
        # Entries whose marshalled values are not what they stand for: compiled afresh.
        {"dataclasses": dict.fromkeys(stored_texts(path), marshal.dumps((1, 2)))},
        {"dataclasses": dict.fromkeys(stored_texts(path), b"not marshal")},
    )
    for content in (b"", b"not marshal", marshal.dumps([1, 2]), *map(marshal.dumps, shapes)):
        path.write_bytes(content)
        assert "Point(x=1, y=2, tags=())" in run(tmp_path).stdout


def stored_texts(path: Path) -> list[str]:
    return list(marshal.loads(path.read_bytes())["dataclasses"])


def test_no_cache_brings_back_a_data_folder_capy_does_not_keep(tmp_path: Path) -> None:
    """As after `capy uninstall --data`: the process exits without recreating the folder."""
    assert "Point(x=1, y=2, tags=())" in run(tmp_path, capy_has_data=False).stdout
    assert not (tmp_path / "data" / "capy").exists()
