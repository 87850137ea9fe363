"""`capy setup`: register capy's MCP server and hooks in an agent platform's own files.

Driven by the platforms pack (`config` of each platform): which files, which section, which
layout. Merges with what the user has, never duplicates, and `undo` removes exactly capy's entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from capy.setup.documents import SetupError

if TYPE_CHECKING:
    from capy.rules.views.platforms import Platform, PlatformsPack
    from capy.setup.plan import SetupPlan

__all__ = ["SetupError", "find_platform", "plan_for", "platform_keys"]


def find_platform(pack: PlatformsPack, name: str) -> Platform:
    """A platform by key or unambiguous prefix: `gemini` is gemini-cli, `vscode` vscode-copilot."""
    wanted = name.strip().lower()
    if wanted in pack.keys:
        return pack.platform(wanted)
    matches = [key for key in pack.keys if key.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return pack.platform(matches[0])
    known = ", ".join(pack.keys)
    raise SetupError(f"unknown platform {name!r}; choose one of: {known}")


def plan_for(
    platform_name: str,
    *,
    project_dir: Path | None = None,
    scope: str = "local",
    undo: bool = False,
    mcp_hooks: bool = False,
    command: str | None = None,
) -> SetupPlan:
    """The changes `capy setup` would make for one platform, nothing written yet. `scope` is
    local (this person, this project: the default), project (the committed files), user, or
    every (all three, for undoing only); `command` is the program that starts capy (default:
    the running capy's absolute path)."""
    from capy.config.paths import home_dir
    from capy.setup.launcher import resolve_launcher
    from capy.setup.plan import plan_setup

    root, pack = _project_and_pack(project_dir)
    platform = find_platform(pack, platform_name)
    return plan_setup(
        pack,
        platform,
        project_dir=root,
        home=home_dir(),
        launcher=resolve_launcher(command),
        scope=scope,
        undo=undo,
        mcp_hooks=mcp_hooks,
    )


def platform_keys(project_dir: Path | None = None) -> tuple[str, ...]:
    """Every platform the pack in force knows (for `capy setup --all`)."""
    return _project_and_pack(project_dir)[1].keys


def _project_and_pack(project_dir: Path | None) -> tuple[Path, PlatformsPack]:
    from capy.config.paths import project_root
    from capy.rules import load_rules

    root = project_root(Path(project_dir) if project_dir else Path.cwd())
    return root, load_rules(root).view("platforms")
