"""`capy setup`: register capy's MCP server and hooks with an agent, or take them out again."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.output import say


def setup(
    *,
    platform: Annotated[str, Parameter(name="--platform")] = "claude-code",
    all_: Annotated[bool, Parameter(name="--all", negative=())] = False,
    shared: Annotated[bool, Parameter(name="--shared", negative=())] = False,
    global_: Annotated[bool, Parameter(name="--global", negative=())] = False,
    command: Annotated[str | None, Parameter(name=["--command", "--binary"])] = None,
    dry_run: Annotated[bool, Parameter(name="--dry-run", negative=())] = False,
    undo: Annotated[bool, Parameter(name="--undo", negative=())] = False,
    mcp_hooks: Annotated[bool, Parameter(name="--mcp-hooks", negative=())] = False,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
) -> int:
    """Register capy's MCP server (`capy serve`) and hooks in the platform's own files.

    By default setup writes this project's files that stay out of git (Claude Code's
    .claude/settings.local.json and its local MCP scope), so teammates without capy are not
    affected; a platform with no such file gets your user-wide file instead, and setup says so.
    The command it writes is the absolute path of the capy you run it with, so the agent starts
    it from any shell. It changes only capy's own entries, keeps the rest of each file byte for
    byte, and backs every changed file up first.

    Parameters
    ----------
    platform
        The agent, by its key in the platforms pack (claude-code, codex, gemini-cli...); an
        unambiguous prefix such as `gemini` or `vscode` works too.
    all_
        Every platform in the pack (with --undo: take capy out of all of them).
    shared
        Write the project's committed files (.mcp.json, .claude/settings.json...) for the whole
        team; everyone then needs capy at the same command.
    global_
        Write the user-wide files (under ~) instead of the project's.
    command
        The program that starts capy, as a shell would split it (`/opt/capy/bin/capy`,
        `python3 -m capy`); default: the absolute path of the running capy.
    dry_run
        Print the changes as a unified diff and write nothing.
    undo
        Remove exactly the entries capy setup added (from any install); everything else stays.
    mcp_hooks
        Run the PreToolUse and PostToolUse hooks as calls to capy's MCP server (its `capy_hook`
        tool, listed only by a server started with `capy serve --mcp-hooks`, which setup
        writes) instead of a process per tool call; Claude Code 2.1.118 or later only. The other
        events stay command hooks. Plain `capy setup` switches back.
    project
        Set up this project directory instead of the current one.
    """
    from capy.cli.output import error_line
    from capy.config import ConfigError
    from capy.rules import RulesError
    from capy.setup import SetupError, plan_for, platform_keys

    if shared and global_:
        error_line("choose one of --shared (the project's committed files) and --global (yours)")
        return 2
    if mcp_hooks and all_:
        error_line("--mcp-hooks is for one platform (claude-code); run it without --all")
        return 2
    scope = "project" if shared else "user" if global_ else "local"
    try:
        platforms = platform_keys(project) if all_ else [platform]
        plans = [
            plan_for(
                name,
                project_dir=project,
                scope=scope,
                undo=undo,
                mcp_hooks=mcp_hooks,
                command=command,
            )
            for name in platforms
        ]
    except SetupError as error:
        error_line(str(error))
        return 2
    except (ConfigError, RulesError):
        raise  # the CLI's own handler prints these with their file and line
    for plan in plans:
        if all_:
            print(f"{plan.platform.name}:")
        if dry_run:
            _print_dry_run(plan)
        else:
            _apply(plan)
    return 0


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
