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
    end_hook(run_hook(event, platform))


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
    outcome = handle(event, payload, platform=platform, exits_after=True)
    if outcome.stdout:
        # Bytes, as UTF-8 whatever the locale: hosts read the JSON as UTF-8, and a character
        # the locale's encoding lacks must not turn the answer into a traceback.
        sys.stdout.buffer.write(outcome.stdout.encode("utf-8", "replace"))
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
    from capy.packregex import save

    save()  # the regex programs this hook compiled, for the next one
    return outcome.exit_code


def run_lean() -> None:
    """The hook start setup writes (capy.setup.launcher.hook_launcher): a hook without `site`,
    anything else as the console script runs it.

    Started with `-S`, the interpreter has not added site-packages to the path. A hook's usual
    path imports only the standard library and capy; the rarer ones (rebuilding the rules
    cache, judging a capy_execute call, saving a session to the store) import pydantic,
    SQLCipher and the rest, and for them the first import nothing else finds runs `site` then.
    """
    parsed = parse_hook_arguments(sys.argv[1:])
    if parsed is None:
        _load_site()
        run()
        return
    if sys.flags.no_site:
        sys.meta_path.append(_SiteOnDemand)
    # A hook lives for one event and frees everything at exit: the cycle collector's passes over
    # every object its imports made cost a UserPromptSubmit hook about 4M of its ~63M
    # instructions (callgrind) and never free anything that matters.
    import gc

    gc.disable()
    event, platform = parsed
    end_hook(run_hook(event, platform))


def end_hook(code: int) -> None:
    """Exit with `code` once the answer is out, without tearing the interpreter down.

    A hook's answer is written and every file it keeps is closed by the time it returns
    (capy.hooks.state and the spool write through descriptors they close), so what a normal exit
    adds is freeing every module the hook imported, one object at a time, and a last collection:
    about 7M of a UserPromptSubmit hook's ~59M instructions (callgrind), for nothing the agent
    or the next hook sees. The exit functions still run, as at a normal exit; a thread that is
    not a daemon (none on a hook's paths) would be waited for by a normal exit, so then it is one.
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # AttributeError: started with fd 1 or 2 closed
        sys.exit(code)  # the interpreter reports an unwritable stream as it always has
    threading = sys.modules.get("threading")
    if threading is not None:
        main = threading.main_thread()
        if any(not item.daemon for item in threading.enumerate() if item is not main):
            sys.exit(code)
    exit_without_teardown(code)


def exit_without_teardown(code: int) -> None:
    """Run the exit functions (caches written back, children ended), flush, and end the process
    without the interpreter freeing every module; an unwritable stream gets the normal exit,
    which reports it and sets the status. The caller knows no non-daemon thread is running."""
    import atexit
    import os

    atexit._run_exitfuncs()  # runs each once and clears them, so a fallback exit repeats none
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def _load_site() -> None:
    """What `site` does at a normal start: site-packages, .pth files, sitecustomize."""
    if sys.flags.no_site and not _loaded_site:
        _loaded_site.append(True)
        import site

        site.main()


_loaded_site: list[bool] = []


class _SiteOnDemand:
    """The last finder on `sys.meta_path`: an import nothing else finds loads `site`, then is
    looked up again by the finders before it (site-packages are on the path by then)."""

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> object:
        if path is not None or _loaded_site:
            return None  # a submodule is found through its package, and site runs once
        _load_site()
        for finder in sys.meta_path:
            if finder is not cls and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, None, target)
                if spec is not None:
                    return spec
        return None
