"""The `capy` console script: `capy hook ...` goes straight to the hooks, the rest to the CLI.

A hook is a fresh process on every tool call of the agent. The cyclopts app (and the pydantic
it brings) costs several times a bare Python start, so `capy hook [--platform P] EVENT` is
parsed here by hand and handled without importing it; anything else, including a hook
invocation this parser does not understand (`--help`), goes to the full CLI, unless
`capy.cli.quick` answers it first (`--version`, `--help`, `which`, `rules hash`, and a plain
`search QUERY...` or `stats`).
"""

from __future__ import annotations

import sys

DEFAULT_PLATFORM = "claude-code"


def run() -> None:
    arguments = sys.argv[1:]
    parsed = parse_hook_arguments(arguments)
    if parsed is None:
        from capy.cli.quick import answer, end

        code = answer(arguments)
        if code is not None:
            end(code)
        from capy.cli import run as run_cli
        from capy.cli.quick import heavy_start

        heavy_start()
        run_cli()
        return
    event, platform = parsed
    # No capy.codecache here: a hook's lean path imports no dataclasses, and the cache would.
    sys.exit(run_hook(event, platform))


def parse_hook_arguments(arguments: list[str]) -> tuple[str, str] | None:
    """(event, platform) for `hook [--platform P | --platform=P] EVENT`, else None."""
    if not arguments or arguments[0] != "hook":
        return None
    platform, event, rest = DEFAULT_PLATFORM, None, arguments[1:]
    while rest:
        item = rest.pop(0)
        if item == "--platform" and rest:
            platform = rest.pop(0)
        elif item.startswith("--platform="):
            platform = item.partition("=")[2]
        elif item.startswith("-") or event is not None:
            return None
        else:
            event = item
    return (event, platform) if event else None


def run_hook(event: str, platform: str) -> int:
    """Read stdin, handle the event, write the answer; the exit code is the platform's."""
    from capy.hooks import handle

    try:
        payload = sys.stdin.buffer.read()
    except (OSError, ValueError):
        payload = b""
    outcome = handle(event, payload, platform=platform)
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
    return outcome.exit_code
