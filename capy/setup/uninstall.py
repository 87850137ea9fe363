"""`capy uninstall`: take out every registration `capy setup` made, and on request capy's data.

Registrations come out the way `capy setup --undo` takes them out (only capy's own entries, every
other byte kept, a backup of each changed file first), for every platform of the pack and every
scope at once: this project's local and committed files and the user-wide ones.

The data folder and the generated key files are capy's own making; they go only when asked. A
data folder that is not plainly capy's own (not named `capy`, or holding the project, the home or
the configuration) is never deleted: a person pointed `data_dir` there, and it may hold theirs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.setup.documents import SetupError

if TYPE_CHECKING:
    from capy.config.settings import Settings
    from capy.setup.plan import FileChange, SetupPlan

DATA_CONTENTS = "knowledge bases, session vault, capsule log, setup backups, hook state and caches"
DATA_FOLDER = f"capy's data folder ({DATA_CONTENTS})"


@dataclass(frozen=True)
class Removal:
    """A file or folder capy made, to delete whole."""

    path: Path
    what: str
    size: int  # bytes on disk, for the person deciding
    is_folder: bool = False


@dataclass
class UninstallPlan:
    setups: list[SetupPlan]
    project: Path
    removals: list[Removal] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # what stays, one sentence each

    @property
    def pending(self) -> list[FileChange]:
        return [change for plan in self.setups for change in plan.pending]


def plan_uninstall(
    project_dir: Path | None = None, *, data: bool = False, keys: bool = False
) -> UninstallPlan:
    """What `capy uninstall` would change and delete, nothing touched yet."""
    from capy.config import load_settings
    from capy.config.paths import config_dir, home_dir
    from capy.setup import plan_for, platform_keys
    from capy.setup.plan import EVERY_SCOPE

    setups = [
        plan_for(name, project_dir=project_dir, scope=EVERY_SCOPE, undo=True)
        for name in platform_keys(project_dir)
    ]
    _refuse_shared_files(setups)
    resolved = load_settings(project_dir)
    settings = resolved.settings
    plan = UninstallPlan(setups, resolved.project_root)
    guarded = (resolved.project_root, home_dir(), config_dir(), settings.key_dir)
    if data:
        _plan_data(plan, settings, guarded)
    if keys:
        _plan_keys(plan, settings, resolved.provenance)
    _note_what_stays(plan, settings, data=data, keys=keys)
    return plan


def _plan_data(plan: UninstallPlan, settings: Settings, guarded: tuple[Path, ...]) -> None:
    from capy.config.paths import APP_NAME

    folder = settings.data_dir
    if not folder.exists() and not folder.is_symlink():
        plan.kept.append(f"no data folder at {folder}: nothing to delete there")
        return
    if folder.is_symlink() or not folder.is_dir():
        raise SetupError(
            f"the data folder {folder} is a link or not a folder, so capy will not delete "
            "through it; remove it by hand, or run without --data"
        )
    resolved = folder.resolve()
    holds = [path for path in guarded if _is_within(path.resolve(), resolved)]
    if folder.name != APP_NAME or holds:
        why = (
            f"it holds {holds[0]}" if holds else f"it is not a folder named {APP_NAME!r} (data_dir)"
        )
        raise SetupError(
            f"capy will not delete the data folder {folder}: {why}, so it may hold files "
            "that are not capy's; delete capy's files there by hand, or run without --data"
        )
    plan.removals.append(Removal(folder, DATA_FOLDER, _size(folder), is_folder=True))


def _plan_keys(plan: UninstallPlan, settings: Settings, provenance: dict[str, str]) -> None:
    for path, label, setting in _generated_keys(settings):
        if path.is_file() and not path.is_symlink():
            plan.removals.append(Removal(path, label, path.stat().st_size))
        if getattr(settings, setting) is not None:
            origin = provenance.get(setting, "your configuration")
            plan.kept.append(
                f"{setting} is set in {origin}, not in a file capy made: remove it there yourself"
            )


def _generated_keys(settings: Settings) -> list[tuple[Path, str, str]]:
    """Each database's generated key file, what it opens, and the setting that replaces it."""
    from capy.capsules.location import CAPSULES_KEY_NAME
    from capy.store.keys import key_file_path
    from capy.store.location import KNOWLEDGE_KEY_NAME
    from capy.vault.location import VAULT_KEY_NAME

    return [
        (key_file_path(settings.key_dir, KNOWLEDGE_KEY_NAME), "the knowledge bases' key", "db_key"),
        (key_file_path(settings.key_dir, VAULT_KEY_NAME), "the session vault's key", "vault_key"),
        (
            key_file_path(settings.key_dir, CAPSULES_KEY_NAME),
            "the capsule log's key",
            "capsules_key",
        ),
    ]


def _note_what_stays(plan: UninstallPlan, settings: Settings, *, data: bool, keys: bool) -> None:
    from capy.config.paths import config_dir, trusted_projects_file, user_config_file

    plan.kept.append(
        f"this covered {plan.project} and your user-wide files; another project you set up "
        "keeps its own: run capy uninstall there, or with --project DIR"
    )
    folder = settings.data_dir
    if not data and folder.exists():
        plan.kept.append(f"kept {folder} ({DATA_CONTENTS}); --data deletes it")
    if not keys and any(path.exists() for path, _, _ in _generated_keys(settings)):
        plan.kept.append(f"kept the key files under {settings.key_dir}; --keys deletes them")
    if keys and not data and folder.exists():
        plan.kept.append(f"without their keys, the databases kept in {folder} cannot be opened")
    for path in (settings.vault_path, settings.capsules_path, settings.db_path):
        if path is not None and data and not _is_within(path, folder):
            plan.kept.append(f"kept {path}: a configured path outside capy's data folder")
    yours = [
        str(path)
        for path in (user_config_file(), trusted_projects_file(), config_dir() / "rules")
        if path.exists()
    ]
    if yours:
        plan.kept.append(f"kept your own configuration: {', '.join(yours)}")


def _refuse_shared_files(setups: list[SetupPlan]) -> None:
    """Each platform's plan is computed from the files as they are now; two platforms editing
    one file would have the second overwrite the first's edit."""
    seen: dict[Path, str] = {}
    for setup in setups:
        for change in setup.pending:
            other = seen.setdefault(change.path, setup.platform.name)
            if other != setup.platform.name:
                raise SetupError(
                    f"{change.shown} is registered by both {other} and {setup.platform.name} in "
                    "the platforms pack; run capy setup --undo --platform for each in turn"
                )


def apply_uninstall(plan: UninstallPlan) -> list[tuple[FileChange, Path]]:
    """Take the registrations out (backing each changed file up), then delete the removals.

    The removals come last so that a failed edit leaves the data, and the backups, in place."""
    from capy.setup.apply import apply_plan

    saved = []
    for setup in plan.setups:
        saved += apply_plan(setup)
    for removal in plan.removals:
        if removal.is_folder:
            shutil.rmtree(removal.path)
        else:
            removal.path.unlink(missing_ok=True)
    return saved


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:  # a file vanishing while we count (a hook finishing) is not an error
            continue
    return total
