"""What every handler is given: the parsed input, the platform adapter and the compact rules."""

from __future__ import annotations

from capy.hooks.routing import Router

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from capy.hooks.adapter import Adapter, HookInput


class HookContext:
    __slots__ = ("_router", "adapter", "exits_after", "hook", "notes", "rules")

    def __init__(
        self, hook: HookInput, adapter: Adapter, rules: dict[str, Any], *, exits_after: bool = False
    ):
        self.hook = hook
        # A hook process that exits right after answering (capy.hooks.dispatch.handle).
        self.exits_after = exits_after
        self.adapter = adapter
        self.rules = rules
        self.notes: list[str] = []
        self._router: Router | None = None

    @property
    def project_root(self) -> Path:
        from pathlib import Path

        return Path(self.rules["project_root"])

    @property
    def data_dir(self) -> str:
        return self.rules["data_dir"]

    @property
    def routing(self) -> dict[str, Any]:
        return self.rules["routing"]

    @property
    def router(self) -> Router:
        if self._router is None:
            self._router = Router(self.routing, self.rules["settings"])
        return self._router

    def note(self, line: str) -> None:
        """One line for stderr: something went wrong but the hook still answers."""
        self.notes.append(line)
