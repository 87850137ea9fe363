"""`capy search` and `capy stats` once warm: what their processes must not import, and that the
console script's cyclopts-free answer is the full CLI's.

Deterministic where a timing is not (`capy bench cli` gives the figures): a real `capy` process
in a project whose knowledge base holds one text and whose rules were compiled by an earlier
command, its imports read from `python -X importtime`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY = "import sys; from capy.entry import run; sys.exit(run())"
# Only for checking or parsing packs, which the compiled-rules cache spares a warm command.
PACK_PARSING = ("ruamel", "packaging", "jsonschema")
# The cyclopts app and its rich help: `capy.cli.quick` runs a plain search or stats without them.
CLI_APP = ("cyclopts", "rich")
# Neither command fetches, serves MCP or opens a TUI; their views are the plain ones
# (capy.rules.views.plain), so a view module importing pydantic itself costs them dearly.
UNUSED = ("httpx", "mcp", "markdownify", "bs4", "textual", "pydantic", "pydantic_core")
# Standard-library modules neither executes: `inspect` and `ipaddress` stand deferred
# (capy.deferred; capy's dataclasses carry docstrings, so dataclasses never asks inspect for
# one), OpenSSL's hashes give way to the built-in SHA-256 (capy.digests), the warm views unpickle
# with pickle's C loader alone, and the code cache's entries are never compiled again.
STANDARD_UNUSED = ("inspect", "ast", "dis", "tokenize", "ipaddress", "hashlib", "_hashlib", "hmac")
STANDARD_UNUSED += ("pickle", "textwrap")
# A warm search's own modules take typing's names only for type checkers (`TYPE_CHECKING =
# False`), `datetime` is built from `_datetime` and `urllib.parse` waits for a use (capy.deferred):
# each costs a few percent.
SEARCH_UNUSED = ("typing", "datetime", "urllib.parse")


def capy(project: Path, *arguments: str, stdin: str = "", importtime: bool = False):
    flags = ["-X", "importtime"] if importtime else []
    return python(project, [*flags, "-c", ENTRY, *arguments], stdin)


def full_cli(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    """The cyclopts app itself, as `capy.cli.main` runs it (never the quick answers)."""
    code = f"import sys; from capy.cli import main; sys.exit(main({list(arguments)!r}))"
    return python(project, ["-c", code])


def python(project: Path, argv: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "CAPY_DB_KEY": "0" * 64},
        timeout=120,
        check=False,
    )


def imported(project: Path, *arguments: str) -> set[str]:
    """The full name of every module a `capy ARGUMENTS` process imported."""
    done = capy(project, *arguments, importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", done.stderr, re.M))


@pytest.fixture
def indexed_project(warm_project: Path) -> Path:
    done = capy(warm_project, "index", "-", "--source", "notes", stdin="The retention policy.\n")
    assert done.returncode == 0, done.stderr
    return warm_project


@pytest.mark.parametrize("arguments", [["search", "retention policy"], ["stats"]])
def test_a_warm_command_parses_no_pack(indexed_project: Path, arguments: list[str]) -> None:
    assert capy(indexed_project, *arguments).returncode == 0
    modules = imported(indexed_project, *arguments)
    assert not {name.split(".")[0] for name in modules} & {*PACK_PARSING, *CLI_APP, *UNUSED}
    # Built only to re-chunk, and nothing is stale: the view is a large pydantic model.
    assert "capy.rules.views.chunking" not in modules


@pytest.mark.parametrize("arguments", [["search", "retention policy"], ["stats"]])
def test_a_warm_command_leaves_unused_standard_modules_alone(
    indexed_project: Path, arguments: list[str]
) -> None:
    for _ in range(2):  # the first warm process writes the views the next ones read
        assert capy(indexed_project, *arguments).returncode == 0
    modules = imported(indexed_project, *arguments)
    assert sorted(modules & set(STANDARD_UNUSED)) == []
    if arguments[0] == "search":
        assert sorted(modules & set(SEARCH_UNUSED)) == []


@pytest.mark.parametrize(
    "arguments",
    [["search", "retention policy"], ["search", "retention", "nothing-like-it"], ["stats"]],
)
def test_the_quick_answer_is_the_full_clis(indexed_project: Path, arguments: list[str]) -> None:
    quick, full = capy(indexed_project, *arguments), full_cli(indexed_project, *arguments)
    assert (quick.returncode, quick.stdout, quick.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    assert quick.stdout


def test_an_option_goes_to_the_cyclopts_app(indexed_project: Path) -> None:
    done = capy(indexed_project, "search", "retention", "--limit", "0")
    assert done.returncode == 2
    assert "--limit must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_config_is_one_line_as_in_the_full_cli(indexed_project: Path) -> None:
    (indexed_project / ".capy.toml").write_text("log_level = [\n")
    for arguments in (["search", "retention"], ["stats"]):
        quick, full = capy(indexed_project, *arguments), full_cli(indexed_project, *arguments)
        assert quick.returncode == full.returncode != 0
        assert quick.stderr == full.stderr
        assert "Traceback" not in quick.stderr


def test_the_datetime_stand_in_is_the_module_importing_it_gives() -> None:
    """capy.deferred builds `datetime` from `_datetime`: the same public names, the same
    objects, and `from datetime import *` gives what it gives without the stand-in."""
    show = (
        "import datetime, json; names = sorted(n for n in vars(datetime) if not n.startswith('_'))"
        "; print(json.dumps([names, sorted(datetime.__all__), "
        "[getattr(datetime, n).__module__ for n in ('date', 'datetime', 'timezone')]]))"
    )
    real = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, check=True)
    lean = subprocess.run(
        [sys.executable, "-c", f"from capy.deferred import defer; defer(); {show}"],
        capture_output=True,
        text=True,
        check=True,
    )
    real_names, real_all, real_modules = json.loads(real.stdout)
    lean_names, lean_all, lean_modules = json.loads(lean.stdout)
    assert set(lean_names) == set(real_names) - {"sys"}  # the module's own import, not an API
    assert lean_all == real_all and lean_modules == real_modules


def test_deferred_modules_work_when_used() -> None:
    """pathlib's `as_uri` reaches the deferred `urllib.parse` through its forwarder; a later
    `import urllib.parse` and a from-import get the real module."""
    code = (
        "import sys; from capy.deferred import defer; defer(); import pathlib; "
        "assert type(sys.modules['urllib.parse']).__name__ == '_OnFirstUse'; "
        "print(pathlib.Path('/tmp/a b').as_uri(), pathlib.Path('/x').as_uri()); "
        "import urllib.parse; from urllib.parse import urlsplit; "
        "print(urllib.parse.quote('a b'), urlsplit('https://h/p').netloc); "
        "import inspect; print(inspect.isfunction(defer))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["file:///tmp/a%20b", "file:///x", "a%20b", "h", "True"]
