"""`handle`: one hook event in, the platform's answer out. Pure: no printing, no exiting.

Whatever goes wrong (empty or malformed input, an unknown event, tool or platform, broken
packs or settings, an unusable data dir or database) the answer is a pass-through: no stdout,
exit 0, and one line on stderr that never quotes the payload, which can hold secrets.
"""

from __future__ import annotations

import os

from capy.hooks.outcome import HookOutcome, pass_through

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def handle(
    event: str,
    payload: bytes,
    *,
    platform: str,
    project_dir: Path | None = None,
    exits_after: bool = False,
) -> HookOutcome:
    """`exits_after`: the caller is a hook process that exits once it has the answer (not a
    server answering in process), so background work it starts can wait for that exit."""
    try:
        return _handle(event, payload, platform, project_dir, exits_after)
    except Exception as error:  # the last line of defence: a hook must never break the agent
        from capy.config.paths import CWD_GONE, working_folder_gone

        if isinstance(error, FileNotFoundError) and working_folder_gone():
            return pass_through(CWD_GONE)
        return pass_through(f"internal error ({type(error).__name__})")


def _handle(
    event: str, payload: bytes, platform: str, project_dir: Path | None, exits_after: bool
) -> HookOutcome:
    from capy.hooks.compiled import HookRulesError, load_hook_rules

    data = _decode(payload)
    if isinstance(data, str):
        return pass_through(data)
    start = str(project_dir) if project_dir is not None else os.getcwd()
    try:
        rules = load_hook_rules(start)
        entry = rules["platforms"].get(platform)
        if entry is None:
            known = ", ".join(sorted(rules["platforms"]))
            return pass_through(f"unknown platform {platform!r} (known: {known})")
        from capy.hooks.adapter import Adapter

        adapter = Adapter(entry)
        canonical = adapter.canonical_event(event)
        if canonical is None:
            return pass_through(f"{platform} has no hook event {event!r}")
        hook = adapter.parse(canonical, data)
        if project_dir is None and hook.cwd and _elsewhere(hook.cwd, rules):
            rules = load_hook_rules(hook.cwd)
    except HookRulesError as error:
        return pass_through(str(error))
    except OSError as error:
        return pass_through(f"capy's files cannot be read ({type(error).__name__})")
    return _run(hook, adapter, rules, exits_after)


def _run(hook: Any, adapter: Any, rules: dict[str, Any], exits_after: bool) -> HookOutcome:
    from capy.hooks.context import HookContext
    from capy.hooks.handlers import run_handler

    context = HookContext(hook, adapter, rules, exits_after=exits_after)
    verdict = run_handler(context)
    outcome = adapter.render(hook.event, verdict)
    if context.notes:
        lines = "".join(f"capy hook: {note}\n" for note in context.notes)
        outcome = HookOutcome(outcome.stdout, lines + outcome.stderr, outcome.exit_code)
    return outcome


def _decode(payload: bytes) -> Any:
    """The JSON object on stdin, or a one-line problem (a str) that never quotes it."""
    if not payload.strip():
        return "empty input on stdin (expected one JSON object)"
    try:
        from capy.leanjson import loads

        data = loads(payload)
    except (ValueError, UnicodeDecodeError):
        return "the input on stdin is not valid JSON"
    if not isinstance(data, dict):
        return "the input on stdin is not a JSON object"
    return data


def _elsewhere(cwd: str, rules: dict[str, Any]) -> bool:
    """True when the payload's working directory lies outside the project the rules are for."""
    root = rules["project_root"].rstrip(os.sep) + os.sep
    return os.path.isabs(cwd) and not (cwd.rstrip(os.sep) + os.sep).startswith(root)
