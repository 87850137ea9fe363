"""Answers the console script gives without the cyclopts app: `--version`, `--help`, `which`,
`rules hash`, a plain `search QUERY...` or `stats`, and `serve` as agents start it.

cyclopts with rich costs many times a bare Python start, and pydantic-settings and a rule-set
validation more again, to print one line. So the exact invocations below are answered here:
the version and the top-level help from constants, `which` and `rules hash` from an answer
kept on disk while every file it came from is unchanged (capy.watched). Anything else (another
option, a broken config, a rule pack with errors) goes to the full CLI, which says what is
wrong. A `search` whose every argument is a query (none starts with `-`) and a bare `stats` run
the very function their cyclopts command calls, with the errors `capy.cli.main` reports said the
same way; any option goes to the cyclopts app. So does `serve`, with the options agents are
registered with, and anything else it is given goes to the app. `capy.cli.main` never comes
here: what it runs is always the cyclopts app.
"""

from __future__ import annotations

import json
import os
import sys
import zlib

from capy import __version__
from capy.cli import COMMANDS, HELP, VERSION_FLAGS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# 1: the printed line of `which` and of `rules hash`, and the warnings that went with it.
CACHE_FORMAT = 1
HELP_FLAGS = ("--help", "-h")
# The rows cyclopts adds to the command list, after the commands (sorted by name).
META_ROWS = (
    ("--help (-h)", "Display this message and exit."),
    ("--version (-V)", "Display application version."),
)
DEFAULT_WIDTH = 80
NARROWEST = 40  # columns from which the layout below is rich's own
BOLD, CYAN, RESET = "\x1b[1m", "\x1b[36m", "\x1b[0m"
PLAIN = ("", "")
# Allocations between two young-generation collections in a quick search or stats (Python's own
# default is 700): importing a few hundred modules then triggers a handful, not hundreds.
GC_YOUNG_THRESHOLD = 50_000
_ends_early: list[bool] = []


def answer(arguments: list[str]) -> int | None:
    """The exit code when `arguments` were answered here, else None (run the full CLI)."""
    if not arguments or (len(arguments) == 1 and arguments[0] in HELP_FLAGS):
        width = terminal_width()
        if width < NARROWEST:
            return None  # rich squeezes the name column too; cyclopts lays that out
        return _printed(top_level_help(width, styles=styles_wanted()))
    if len(arguments) == 1 and arguments[0] in VERSION_FLAGS:
        from capy.version import version_line

        return _printed(version_line())
    if arguments == ["which"]:
        return _cached_line("which", _which_line)
    if arguments == ["rules", "hash"]:
        return _cached_line("rules-hash", _hash_line)
    if len(arguments) > 1 and arguments[0] == "search" and _all_positional(arguments[1:]):
        _lean_short_command()
        return _short_lived(_as_main(_plain_search(arguments[1:])))
    if arguments == ["stats"]:
        _lean_short_command()
        return _short_lived(_as_main(_plain_stats))
    if arguments and arguments[0] == "serve":
        options = serve_options(arguments[1:])
        if options is not None:
            return _as_main(lambda: _plain_serve(*options))
    return None


# --- commands run without cyclopts ------------------------------------------------------------


def _all_positional(arguments: list[str]) -> bool:
    return not any(argument.startswith("-") for argument in arguments)


def _plain_search(queries: list[str]) -> Callable[[], int]:
    def run() -> int:
        from capy.cli.knowledge_search import run_search
        from capy.cli.warm import warmed

        with warmed():
            return run_search(queries)

    return run


def _plain_stats() -> int:
    from capy.cli.stats_report import show_stats
    from capy.cli.warm import warmed

    with warmed():
        return show_stats()


# `capy serve`'s options: the ones taking a path, and the flag.
SERVE_PATHS = ("--project", "--db")
SERVE_FLAG = "--mcp-hooks"


def serve_options(arguments: list[str]) -> tuple[str | None, str | None, bool] | None:
    """(project, db, mcp_hooks) of `serve [--project P] [--db P] [--mcp-hooks]` as agents start
    it (also `--name=value`), each at most once; None for anything else (`--help`, a typo, a
    flag given twice), which the cyclopts app answers."""
    values: dict[str, str] = {}
    hooks, rest = False, list(arguments)
    while rest:
        item = rest.pop(0)
        name, equals, value = item.partition("=")
        if item == SERVE_FLAG and not hooks:
            hooks = True
        elif name in SERVE_PATHS and name not in values and (equals or rest):
            value = value if equals else rest.pop(0)
            if not value or value.startswith("-"):
                return None
            values[name] = value
        else:
            return None
    return values.get("--project"), values.get("--db"), hooks


def _plain_serve(project: str | None, db: str | None, mcp_hooks: bool) -> int:
    """What the cyclopts `serve` command runs, without the cyclopts app (a second or more of an
    agent's wait for its tools, on a loaded machine)."""
    from pathlib import Path

    from capy.cli.serving import run_server

    return run_server(
        Path(project) if project is not None else None,
        Path(db) if db is not None else None,
        mcp_hooks,
    )


def _as_main(command: Callable[[], int]) -> int:
    """Run `command` as `capy.cli.main` runs a command: what escapes it is one line, not a
    traceback."""
    heavy_start()
    from capy.cli import _report
    from capy.cli.output import error_line

    try:
        return command()
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except Exception as exc:
        return _report(exc, error_line)


def end(code: int) -> None:
    """Exit with `code`: at once after a short-lived command answered here, else as usual."""
    if _ends_early:
        from capy.entry import exit_without_teardown

        exit_without_teardown(code)
    sys.exit(code)


def _short_lived(code: int) -> int:
    """Mark a command whose process may end without the interpreter's teardown: a search or
    stats has closed its store, flushed what it wrote and started no thread, and tearing down
    the modules it imported (a full garbage collection, then every module's namespace) cost a
    tenth of its run."""
    _ends_early.append(True)
    return code


def heavy_start() -> None:
    """Ready this process for a command that imports much of capy: the code its dataclasses
    and regexes compile comes from disk (capy.codecache)."""
    from capy.codecache import install

    install()


def _lean_short_command() -> None:
    """Ready this process for a short command: rare collections, and the standard-library
    modules it never uses left unexecuted (capy.deferred)."""
    from capy.deferred import defer

    defer()
    _collect_rarely()


def _collect_rarely() -> None:
    """For a short command: the cyclic garbage collector, which would otherwise walk every
    object imported so far hundreds of times over, runs rarely (the command's cycles are few,
    and still collected). Not for a long-lived process such as the server."""
    import gc

    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


# --- help -------------------------------------------------------------------------------------


def top_level_help(width: int, *, styles: tuple[str, str] = PLAIN) -> str:
    """`capy --help` as cyclopts lays it out, styles included (a test holds the two equal)."""
    import textwrap

    bold, cyan = styles
    rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)] + list(META_ROWS)
    names = max(len(name) for name, _ in rows)
    inner = width - 4  # "│ " and " │"
    text_width = max(10, inner - names - 2)
    usage = _styled("Usage: ", bold) + _styled("capy COMMAND", bold)
    # rich pads every line of a wrapped paragraph but the last to the full width.
    paragraph = textwrap.wrap(HELP, width, break_on_hyphens=False)
    lines = [usage, "", *[line.ljust(width) for line in paragraph[:-1]], paragraph[-1], ""]
    title = "╭─ Commands "
    lines.append(title + "─" * (width - len(title) - 1) + "╮")
    for name, summary in rows:
        parts = textwrap.wrap(summary, text_width, break_on_hyphens=False) or [""]
        for index, part in enumerate(parts):
            if index == 0:
                cell = _styled(f"{name:<{names}}", cyan) + _styled("  ", cyan)
            else:
                cell = _styled(" " * (names + 2), cyan)
            lines.append(f"│ {cell}{part:<{inner - names - 2}} │")
    lines.append("╰" + "─" * (width - 2) + "╯")
    return "\n".join(lines)


def _styled(text: str, code: str) -> str:
    return f"{code}{text}{RESET}" if code else text


def styles_wanted() -> tuple[str, str]:
    """The (bold, cyan) escape codes by rich's rules: styles on a terminal (or FORCE_COLOR)
    unless TERM is dumb; NO_COLOR drops the colour and keeps the bold."""
    terminal = bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()
    if not terminal or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return PLAIN
    return (BOLD, "" if os.environ.get("NO_COLOR") else CYAN)


def terminal_width() -> int:
    """The width rich would use: `COLUMNS`, else the first standard stream that is a terminal."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if os.environ.get("TERM", "").lower() in ("dumb", "unknown") and sys.stdout.isatty():
        return DEFAULT_WIDTH
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width or DEFAULT_WIDTH
    return DEFAULT_WIDTH


# --- cached lines -----------------------------------------------------------------------------


def _cached_line(name: str, build: Callable[[], tuple[str, list[str]]]) -> int | None:
    """Print the line `build` makes for this project, from the cache while it holds.

    `build` returns the line and the warnings the slow path gave (project settings ignored as
    untrusted), which are said again on every answer, as the full CLI would.
    """
    from capy.watched import cache_dir, environment, read_entry, write_entry

    try:
        start = os.getcwd()
    except OSError:
        return None  # a working directory that is gone: the full CLI says so
    inputs = [__version__, CACHE_FORMAT, name, start, environment()]
    digest = zlib.crc32(json.dumps(inputs).encode())
    path = os.path.join(cache_dir("cli"), f"{name}-{digest:08x}.json")
    entry = read_entry(path, CACHE_FORMAT)
    if not _usable(entry, inputs):
        entry = _build_entry(start, build)
        if entry is None:
            return None
        entry["inputs"] = inputs
        write_entry(path, entry)
    else:
        for line in entry["warnings"]:
            print(line, file=sys.stderr)
    return _printed(entry["line"])


def _usable(entry: dict[str, Any] | None, inputs: list[Any]) -> bool:
    from capy.watched import is_fresh

    return (
        entry is not None
        and entry.get("inputs") == inputs
        and isinstance(entry.get("line"), str)
        and isinstance(entry.get("warnings"), list)
        and is_fresh(entry.get("watch", []))
    )


def _build_entry(start: str, build: Callable[[], tuple[str, list[str]]]) -> dict[str, Any] | None:
    from pathlib import Path

    from capy.config import ConfigError
    from capy.config.paths import project_root
    from capy.rules import RulesError
    from capy.watched import (
        config_inputs,
        marker_inputs,
        overlay_inputs,
        shipped_inputs,
        watch_list,
    )

    root = project_root(Path(start))
    # Listed before loading, so that whatever fails, fixing the file invalidates the entry.
    watched = [*marker_inputs(Path(start), root), *shipped_inputs(), *config_inputs(root)]
    try:
        watched += overlay_inputs(root)
        line, warnings = build()
    except (ConfigError, RulesError):
        return None  # the full CLI says what is wrong
    return {
        "format": CACHE_FORMAT,
        "watch": watch_list(watched),
        "line": line,
        "warnings": list(dict.fromkeys(warnings)),
    }


def _which_line() -> tuple[str, list[str]]:
    from capy.cli.output import shown
    from capy.config import load_settings
    from capy.store import locate_store

    warnings = [item.line() for item in load_settings().ignored]
    return shown(locate_store().path), warnings


def _hash_line() -> tuple[str, list[str]]:
    from capy.config import load_settings
    from capy.rules import load_rules

    ruleset = load_rules()
    warnings = [item.line() for item in [*load_settings().ignored, *ruleset.ignored]]
    return ruleset.index_version, warnings


def _printed(text: str) -> int:
    if sys.stdout is None:  # started with fd 1 closed: nowhere to answer, nothing wrong
        return 0
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `capy --help | head -1`: not an error worth a word
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0
