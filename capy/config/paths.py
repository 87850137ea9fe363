"""Where capy keeps its files: XDG config and data directories, and the project root."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "capy"
PROJECT_MARKERS = (".git", ".capy")


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home: `$HOME` from `environ` when given, else what the OS reports."""
    home = _environ(environ).get("HOME")
    return Path(home) if home else Path.home()


def _xdg_dir(variable: str, fallback: str, environ: Mapping[str, str] | None) -> Path:
    value = _environ(environ).get(variable, "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if value and Path(value).is_absolute():
        return Path(value) / APP_NAME
    return home_dir(environ) / fallback / APP_NAME


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/capy`, or `~/.config/capy`."""
    return _xdg_dir("XDG_CONFIG_HOME", ".config", environ)


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/capy`, or `~/.local/share/capy`."""
    return _xdg_dir("XDG_DATA_HOME", ".local/share", environ)


def user_config_file(environ: Mapping[str, str] | None = None) -> Path:
    return config_dir(environ) / "config.toml"


def trusted_projects_file(environ: Mapping[str, str] | None = None) -> Path:
    """The projects whose own overlays and config the user trusts (`capy trust`); never in a
    project, which could ship its own."""
    return config_dir(environ) / "trusted-projects.json"


def user_rules_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Rule-pack overlays that apply to every project of this user."""
    return config_dir(environ) / "rules"


def project_rules_dir(root: Path) -> Path:
    """Rule-pack overlays that apply to one project."""
    return root / ".capy" / "rules"


def project_config_files(root: Path) -> tuple[Path, Path]:
    """The project's config files, lowest precedence first."""
    return (root / ".capy" / "config.toml", root / ".capy.toml")


CWD_GONE = "the current folder no longer exists; cd to one that does and run it again"


def working_folder_gone() -> bool:
    """Whether this process's current folder was deleted under it: every relative path, and
    the project lookup, would fail with a bare FileNotFoundError."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def project_root(start: Path) -> Path:
    """The nearest ancestor of `start` holding `.git` or `.capy`, else `start` itself.

    A linked git worktree shares the knowledge of its main worktree, so it resolves to the main
    worktree's root rather than its own.
    """
    start = start.expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").is_file():
            return _main_worktree(candidate)
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return start


def _main_worktree(worktree: Path) -> Path:
    """Follow a `.git` file (`gitdir: <main>/.git/worktrees/<name>`) back to the main worktree."""
    try:
        first_line = (worktree / ".git").read_text(encoding="utf-8").splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return worktree
    if not first_line.startswith("gitdir:"):
        return worktree
    gitdir = Path(first_line.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = worktree / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        # No commondir: a submodule, whose checkout is a project of its own.
        return worktree
    common_dir = Path(common) if Path(common).is_absolute() else gitdir / common
    common_dir = common_dir.resolve()
    # A bare repository has no main worktree; the linked worktree is then the best root we have.
    if common_dir.name != ".git" or not common_dir.is_dir():
        return worktree
    return common_dir.parent
