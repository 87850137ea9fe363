"""The workspace of a `capy stats` started warm (see capy.cli.warm)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.api.workspace import Workspace

if TYPE_CHECKING:
    from capy.cli.warm import WarmContext
    from capy.store import Store


class WarmWorkspace(Workspace):
    """A CLI workspace whose project, rules, redaction setting and store come from a warm
    context instead of the settings."""

    def __init__(self, context: WarmContext, **options: Any) -> None:
        super().__init__(Path(context.project_root), **options)
        self._context = context
        self.__dict__.update(
            project_dir=Path(context.project_root),
            rules=context.ruleset,
            redacts_replies=context.redaction_replies,
        )

    def _open_store(self) -> Store:
        from capy.api.workspace import _quiet
        from capy.store import open_located

        return open_located(self._context.location(), notify=_quiet)

    def store_directory(self) -> Path:
        return Path(self._context.db_path).parent
