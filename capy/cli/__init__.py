"""The `capy` command line: a cyclopts app whose command groups live one per module."""

from __future__ import annotations

import sys

from cyclopts import App

from capy import __version__

app = App(
    name="capy",
    help="A context-saving sandbox and persistent memory for AI coding agents.",
    version=__version__,
    result_action="return_value",
)


def _register() -> None:
    # Imported here so that `capy --help` builds the tree without importing every group eagerly.
    from capy.cli import bench as bench_commands
    from capy.cli import config as config_commands
    from capy.cli import rules as rules_commands

    app.command(rules_commands.app)
    app.command(config_commands.app)
    app.command(bench_commands.app)


_register()


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure a person can cause ends in one clear line, not a traceback."""
    from capy.cli.output import error_line

    try:
        result = app(argv if argv is not None else sys.argv[1:])
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except Exception as exc:  # the last line of defence: a traceback shown to a user is a bug
        return _report(exc, error_line)
    return result if isinstance(result, int) else 0


def _report(exc: Exception, error_line) -> int:
    import os

    from capy.config import ConfigError
    from capy.rules import RulesError

    if isinstance(exc, RulesError):
        print(exc.render(), file=sys.stderr)
        error_line("the rule packs in force have errors; fix them or remove the overlay")
        return 1
    if isinstance(exc, ConfigError):
        error_line(str(exc))
        return 2
    if os.environ.get("CAPY_DEBUG"):
        raise exc
    error_line(
        f"internal error: {type(exc).__name__}: {exc}. Set CAPY_DEBUG=1 to see the "
        "traceback, and please report it."
    )
    return 70


def run() -> None:
    sys.exit(main())
