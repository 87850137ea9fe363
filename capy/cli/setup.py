"""`capy setup`: register capy's MCP server and hooks with an agent, or take them out again."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import say


def setup(
    *,
    platform: Annotated[str, Parameter(name="--platform")] = "claude-code",
    global_: Annotated[bool, Parameter(name="--global", negative=())] = False,
    dry_run: Annotated[bool, Parameter(name="--dry-run", negative=())] = False,
    undo: Annotated[bool, Parameter(name="--undo", negative=())] = False,
    mcp_hooks: Annotated[bool, Parameter(name="--mcp-hooks", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
) -> int:
    """Register capy's MCP server (`capy serve`) and hooks in the platform's own files.

    Merges with what is there, never adds an entry twice, and backs every changed file up first.

    Parameters
    ----------
    platform
        The agent, by its key in the platforms pack (claude-code, codex, gemini-cli...); an
        unambiguous prefix such as `gemini` or `vscode` works too.
    global_
        Write the user-wide files (under ~) instead of the project's.
    dry_run
        Print the changes as a unified diff and write nothing.
    undo
        Remove exactly the entries capy setup added; everything else stays.
    mcp_hooks
        Run the PreToolUse and PostToolUse hooks as calls to capy's MCP server (its `capy_hook`
        tool) instead of a process per tool call; Claude Code 2.1.118 or later only. The other
        events stay command hooks. Plain `capy setup` switches back.
    project
        Set up this project directory instead of the current one.
    """
    from capy.cli.output import error_line
    from capy.config import ConfigError
    from capy.rules import RulesError
    from capy.setup import SetupError, plan_for

    try:
        plan = plan_for(
            platform, project_dir=project, user_scope=global_, undo=undo, mcp_hooks=mcp_hooks
        )
    except SetupError as error:
        error_line(str(error))
        return 2
    except (ConfigError, RulesError):
        raise  # the CLI's own handler prints these with their file and line
    if dry_run:
        return _print_dry_run(plan)
    return _apply(plan)


def _print_dry_run(plan) -> int:
    for change in plan.pending:
        say(change.diff(), end="")
    _print_notes(plan)
    if not plan.pending:
        say(_nothing_to_do(plan))
    return 0


def _apply(plan) -> int:
    from capy.setup.apply import apply_plan

    saved = apply_plan(plan)
    verb = "removed capy from" if plan.undo else "registered capy in"
    for change in plan.pending:
        action = "deleted" if change.after is None else verb
        say(f"{action} {change.shown}")
    for change, backup in saved:
        say(f"  backup of {change.shown}: {backup}")
    _print_notes(plan)
    if not plan.pending:
        say(_nothing_to_do(plan))
    elif not plan.undo:
        say(f"restart {plan.platform.name} to load capy; `capy doctor` checks the registration")
    return 0


def _print_notes(plan) -> None:
    for change in plan.changes:
        for note in change.notes:
            say(f"note: {note}")
    for note in plan.notes:
        say(f"note: {note}")


def _nothing_to_do(plan) -> str:
    if plan.undo:
        return f"nothing to remove: capy is not registered with {plan.platform.name} here"
    return f"nothing to change: capy is already registered with {plan.platform.name}"
