"""capy.codecache: `@dataclass` code from disk is the code `@dataclass` compiles, and only a file
of this user's that nobody else can write is ever run. Real processes, real files."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

# A process that installs the cache, makes a dataclass, and prints what the class does.
PROGRAM = """
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
"""


def run(home: Path) -> subprocess.CompletedProcess:
    environ = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], env=environ, capture_output=True, text=True, check=True
    )


def cache_file(home: Path) -> Path:
    files = list((home / "data" / "capy" / "cache" / "code").glob("dataclasses-*.marshal"))
    assert len(files) == 1
    return files[0]


def test_a_second_process_runs_the_cached_code_with_the_same_result(tmp_path: Path) -> None:
    first = run(tmp_path)
    stored = marshal.loads(cache_file(tmp_path).read_bytes())
    assert any("def __init__(self,x:_type_x,y:_type_y=_dflt_y" in text for text in stored)
    for text, code in stored.items():  # what dataclasses' own `exec` of the text compiles
        assert code == compile(text, "<string>", "exec", dont_inherit=True)
    assert first.stdout.splitlines()[0] == "Point(x=1, y=2, tags=()) True True True"
    # `from __future__ import annotations` in capy.codecache must not turn these into strings.
    assert "<class 'int'>" in first.stdout
    second = run(tmp_path)
    assert second.stdout == first.stdout


def test_a_file_another_user_could_write_is_not_run(tmp_path: Path) -> None:
    run(tmp_path)
    path = cache_file(tmp_path)
    stored = marshal.loads(path.read_bytes())
    poisoned = marshal.dumps(
        {text: compile("raise SystemExit(7)", "<s>", "exec") for text in stored}
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
    for content in (b"", b"not marshal", marshal.dumps([1, 2]), marshal.dumps({"x": 1})):
        path.write_bytes(content)
        assert "Point(x=1, y=2, tags=())" in run(tmp_path).stdout
