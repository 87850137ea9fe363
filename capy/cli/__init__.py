"""The `capy` command line: a cyclopts app whose command groups live one per module."""

from __future__ import annotations

import sys

HELP = "A context-saving sandbox and persistent memory for AI coding agents."
VERSION_FLAGS = ("--version", "-V")


# Registered by import path: cyclopts imports a command's module only when it is invoked, so a
# command never pays for the imports of the others. The one-line help shows in `capy --help`
# without importing anything.
COMMANDS = {
    "rules": ("capy.cli.rules:app", "Validate, inspect and document the rule packs."),
    "config": ("capy.cli.config:app", "Show capy's resolved configuration."),
    "which": ("capy.cli.store:which", "Print the knowledge-base path for this project."),
    "dbsize": ("capy.cli.store:dbsize", "Show the knowledge base's file, WAL and table sizes."),
    "checkpoint": ("capy.cli.store:checkpoint", "Checkpoint the knowledge base's WAL."),
    "encrypt": ("capy.cli.store:encrypt", "Encrypt a plaintext knowledge base or rotate its key."),
    "bench": ("capy.cli.bench:app", "Measure capy and print the figures."),
    "index": ("capy.cli.knowledge:index", "Index a file or standard input for search."),
    "search": ("capy.cli.knowledge:search", "Search the knowledge base."),
    "reindex": ("capy.cli.knowledge:reindex", "Re-chunk sources indexed with older rules."),
    "cleanup": ("capy.cli.knowledge:cleanup", "List or remove expired and evictable sources."),
    "execute": ("capy.cli.execute:execute", "Run code in the sandbox and print its capped output."),
    "redact": ("capy.cli.redact:redact", "Redact secrets from a file or stdin."),
    "policy": ("capy.cli.policy:app", "Check commands, paths and URLs against permission rules."),
    "serve": ("capy.cli.serve:serve", "Run the MCP server on stdio (what agents start)."),
    "demo": ("capy.cli.demo:demo", "Run a real MCP session and show what it saved."),
    "fetch": ("capy.cli.fetch:fetch", "Fetch URLs, convert and index them for search."),
    "stats": ("capy.cli.stats:stats", "Show what capy kept out of the agent's context."),
    "hook": ("capy.cli.hook:hook", "Handle one agent hook event (JSON on stdin)."),
    "setup": ("capy.cli.setup:setup", "Register capy's MCP server and hooks with an agent."),
    "uninstall": (
        "capy.cli.uninstall:uninstall",
        "Take capy out of every agent; --data and --keys delete its data too.",
    ),
    "completion": ("capy.cli.completion:completion", "Print a shell's completion script for capy."),
    "doctor": ("capy.cli.doctor:doctor", "Check every part of capy and say what to fix."),
    "trust": ("capy.cli.trust:trust", "Let a project's own overlays and config loosen guards."),
    "sweep": ("capy.cli.sweep:sweep", "Index past agent sessions for search."),
    "vault": ("capy.cli.vault:app", "Archive past sessions verbatim; search and restore them."),
    "semantic": (
        "capy.cli.semantic:app",
        "Local embeddings for search: install the model, status, index.",
    ),
    "proxy": (
        "capy.cli.proxy:app",
        "Forward OpenAI-compatible chat completions and record them as capsules.",
    ),
    "capsules": (
        "capy.cli.capsules:app",
        "The immutable capsule log: add, list, show, verify, forget, archive, export, import.",
    ),
    "recall": ("capy.cli.recall:recall", "Recall past sessions' capsules as a brief in budget."),
    "memory": ("capy.cli.memory:app", "What capy learned from sessions: list, add, edit, forget."),
}


_built: list = []  # the one app of this process, once built (functools would cost an import)


def build_app():
    """The cyclopts app, built on first use: cyclopts and rich cost many times a bare Python
    start, and `capy.cli.quick` answers `--version`, `--help` and a few lookups without them."""
    if _built:
        return _built[0]
    from cyclopts import App

    from capy.version import version_line

    app = App(
        name="capy",
        help=HELP,
        version=version_line,
        version_flags=VERSION_FLAGS,
        result_action="return_value",
    )
    for name, (target, summary) in COMMANDS.items():
        app.command(target, name=name, help=summary)
    _built.append(app)
    return app


def __getattr__(name: str):
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure a person can cause ends in one clear line, not a traceback."""
    from capy.cli.output import error_line

    try:
        result = build_app()(argv if argv is not None else sys.argv[1:])
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except Exception as exc:  # the last line of defence: a traceback shown to a user is a bug
        return _report(exc, error_line)
    return result if isinstance(result, int) else 0


def _report(exc: Exception, error_line) -> int:
    import os

    from capy.config import ConfigError
    from capy.config.paths import CWD_GONE, working_folder_gone
    from capy.rules import RulesError

    if isinstance(exc, RulesError):
        print(exc.render(), file=sys.stderr)
        error_line("the rule packs in force have errors; fix them or remove the overlay")
        return 1
    if isinstance(exc, ConfigError):
        for line in exc.lines:
            error_line(line)
        return 2
    if isinstance(exc, BrokenPipeError):
        # `capy ... | head` closed the pipe early: not an error worth a word.
        _silence_stdout()
        return 0
    if isinstance(exc, FileNotFoundError) and working_folder_gone():
        error_line(CWD_GONE)
        return 2
    if os.environ.get("CAPY_DEBUG"):
        raise exc
    error_line(
        f"internal error: {type(exc).__name__}: {exc}. Set CAPY_DEBUG=1 to see the "
        "traceback, and please report it."
    )
    return 70


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> None:
    sys.exit(main())
