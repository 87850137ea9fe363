"""What every check needs, resolved once: the project, the home, and the packs in force."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class DoctorContext:
    project_dir: Path
    home: Path
    ruleset: Any = None  # the validated packs in force, or the shipped ones when overlays fail
    overlays_ok: bool = True
    settings: Any = None  # capy.config.Settings, when the config loads
    cache: dict[str, Any] = field(default_factory=dict)

    def view(self, name: str) -> Any:
        return self.ruleset.view(name)

    def shown(self, path: Path) -> str:
        """A path as a person recognises it: project-relative, `~/...`, else absolute."""
        from capy.setup.plan import shown_path

        return shown_path(path, self.project_dir, self.home)
