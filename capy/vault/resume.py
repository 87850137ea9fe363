"""`capy vault resume`: put a session back where its agent looks for it, and name the command
that resumes it (the platforms pack's `resume_command`), to print or to run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from capy.vault.errors import VaultError
from capy.vault.restore import RestoredFile, find_session, restore_folder, restore_session

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.vault import Vault


@dataclass(frozen=True)
class ResumeTarget:
    """What resuming a session would do, worked out without writing anything."""

    label: str
    command: str  # as the pack writes it, with the session id filled in
    cwd: Path | None  # the session's working directory, when it still exists here
    folder: Path  # where its files are restored (where its agent looks for them)


@dataclass(frozen=True)
class ResumePlan:
    label: str
    command: str  # as the pack writes it, with the session id filled in
    cwd: Path | None  # the session's working directory, when it still exists here
    restored: list[RestoredFile]


def prepare_resume(
    vault: Vault, wanted: str, rules: RuleSet, output: Path | None = None
) -> ResumePlan:
    """Restore the session's files, then build its platform's resume command."""
    target = resume_target(vault, wanted, rules, output)
    restored = restore_session(vault, target.label, output)
    return ResumePlan(target.label, target.command, target.cwd, restored)


def resume_target(
    vault: Vault, wanted: str, rules: RuleSet, output: Path | None = None
) -> ResumeTarget:
    """The session's resume command, working directory and restore folder; writes nothing.
    Raises `VaultError` when the platforms pack names no resume command for its platform."""
    session_rowid, label, _ = find_session(vault, wanted)
    platform, session_id, project = vault.conn.execute(
        "SELECT platform, session_id, project FROM sessions WHERE id = ?", (session_rowid,)
    ).fetchone()
    command = _resume_command(rules, platform, session_id)
    cwd = Path(project) if project and Path(project).is_dir() else None
    return ResumeTarget(label, command, cwd, restore_folder(vault, label, output))


def _resume_command(rules: RuleSet, platform: str, session_id: str) -> str:
    known = {item.key: item for item in rules.view("platforms").platforms}
    command = known[platform].resume(session_id) if platform in known else None
    if command is None:
        raise VaultError(
            f"the platforms pack names no resume command for {platform!r}; restore the session "
            "with `capy vault restore` and open it from the agent itself"
        )
    return command
