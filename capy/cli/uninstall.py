"""`capy uninstall`: take capy out of every agent, and on request delete its data and keys."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import error_line, say

REMOVE_PROGRAM = (
    "capy itself stays installed; remove it with the tool that installed it: "
    "`pipx uninstall capy-mcp`, `uv tool uninstall capy-mcp` or `pip uninstall capy-mcp`"
)


def uninstall(
    *,
    data: Annotated[bool, Parameter(name="--data", negative=())] = False,
    keys: Annotated[bool, Parameter(name="--keys", negative=())] = False,
    yes: Annotated[bool, Parameter(name=["--yes", "-y"], negative=())] = False,
    dry_run: Annotated[bool, Parameter(name="--dry-run", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
) -> int:
    """Remove every registration `capy setup` made, from every agent and every scope.

    Takes capy's MCP server and hooks out of this project's local and committed files and your
    user-wide ones, for every platform, exactly as `capy setup --undo` does: only capy's own
    entries, every other byte kept, a backup of each changed file first. Your knowledge bases,
    session vault and keys stay unless you ask for them with --data and --keys; capy lists
    each path before deleting it and asks first (--yes skips the question). Other projects you
    set up keep their own files: run it there too, or with --project.

    Parameters
    ----------
    data
        Also delete capy's data folder (knowledge bases, session vault, setup backups, hook
        state and caches).
    keys
        Also delete the generated key files; whatever they encrypted can never be opened again.
    yes
        Delete without asking (needed when standard input is not a terminal).
    dry_run
        Print what would change and be deleted, and change nothing.
    project
        Take capy out of this project directory instead of the current one.
    """
    from capy.setup import SetupError
    from capy.setup.uninstall import plan_uninstall

    try:
        plan = plan_uninstall(project, data=data, keys=keys)
    except SetupError as error:
        error_line(str(error))
        return 2
    if dry_run:
        _print_dry_run(plan)
        return 0
    if plan.removals and not (yes or _confirmed(plan)):
        return 1
    return _apply(plan, listed=not yes)


def _print_dry_run(plan) -> None:
    for setup in plan.setups:
        for change in setup.pending:
            say(change.diff(), end="")
    _print_removals_and_kept(plan, "would delete")


def _print_removals_and_kept(plan, verb: str) -> None:
    for removal in plan.removals:
        say(f"{verb} {_described(removal)}")
    if not plan.pending and not plan.removals:
        say("nothing to remove: capy is not registered with any agent here")
    for line in plan.kept:
        say(line)


def _confirmed(plan) -> bool:
    if not sys.stdin.isatty():
        error_line(
            "capy uninstall would delete files ("
            + ", ".join(str(removal.path) for removal in plan.removals)
            + "); add --yes to delete them without a question, or --dry-run to see everything"
        )
        return False
    say("capy uninstall will delete:")
    for removal in plan.removals:
        say(f"  {_described(removal)}")
    try:
        answer = input("delete these? [y/N] ")
    except EOFError:
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    say("nothing was changed or deleted")
    return False


def _apply(plan, *, listed: bool) -> int:
    from capy.setup.uninstall import apply_uninstall

    if not listed:  # the question listed them already; otherwise say it before doing it
        for removal in plan.removals:
            say(f"deleting {_described(removal)}")
    saved = apply_uninstall(plan)
    for setup in plan.setups:
        for change in setup.pending:
            action = "deleted" if change.after is None else "removed capy from"
            say(f"{setup.platform.name}: {action} {change.shown}")
    for change, backup in saved:
        if backup.exists():  # --data deletes this run's backups with the rest of the data
            say(f"  backup of {change.shown}: {backup}")
    _print_removals_and_kept(plan, "deleted")
    say(REMOVE_PROGRAM)
    return 0


def _described(removal) -> str:
    from capy.units import human_bytes

    size = human_bytes(removal.size)
    return f"{removal.path}: {removal.what}, {size}{' in all' if removal.is_folder else ''}"
