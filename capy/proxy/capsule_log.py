"""The capsule log as a proxy thread holds it: opened on first use by the one thread that uses
it (a SQLite connection stays in its thread), closed when that thread stops. The recorder and
the recall injector each keep one."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from capy.capsules import CapsuleStore
    from capy.rules.ruleset import RuleSet


class ThreadCapsuleLog:
    def __init__(self, project_dir: Path, rules: RuleSet) -> None:
        self._project_dir = project_dir
        self._rules = rules
        self._store: CapsuleStore | None = None

    def store(self) -> CapsuleStore:
        if self._store is None:
            from capy.capsules import open_capsules

            # Opening notices would reach the client's terminal for nothing: the proxy reports
            # its own failures, one line each.
            self._store = open_capsules(
                project_dir=self._project_dir, rules=self._rules, notify=lambda _line: None
            )
        return self._store

    def close(self) -> None:
        if self._store is not None:
            with suppress(Exception):  # closing at exit: nothing left to lose
                self._store.close()
            self._store = None
