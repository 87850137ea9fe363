"""Which executable runs each language: the pack's candidates in order, first on PATH wins.

Detection is cached per process and keyed by PATH, so a long-running server that has PATH
changed under it looks again rather than running a stale interpreter.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import cache

from capy.executor.errors import ExecutorError
from capy.rules.views.executor import ExecutorPack, Language, RuntimePlan


@dataclass(frozen=True)
class ResolvedRuntime:
    language: Language
    plan: RuntimePlan
    executable: str


@dataclass(frozen=True)
class RuntimeStatus:
    """One language as `capy doctor` reports it: the runtime found, or what to install."""

    language: str
    command: str | None
    executable: str | None
    candidates: tuple[str, ...]


def find_language(view: ExecutorPack, name: str) -> Language:
    language = view.language(name) if name and name.strip() else None
    if language is None:
        known = ", ".join(sorted({lang.language for lang in view.by_name.values()}))
        if not name or not name.strip():
            raise ExecutorError(f"no language given; capy runs: {known}")
        raise ExecutorError(f"unknown language {name.strip()!r}; capy runs: {known}")
    return language


@cache
def _which(command: str, path: str) -> str | None:
    return shutil.which(command, path=path)


def resolve_runtime(language: Language) -> ResolvedRuntime:
    path = os.environ.get("PATH", os.defpath)
    for runtime in language.runtimes:
        executable = _which(runtime.command, path)
        if executable:
            return ResolvedRuntime(language, language.plan(runtime), executable)
    raise ExecutorError(
        f"no runtime for {language.language} on PATH: install {_one_of(language)} "
        "and make sure it is on PATH"
    )


def _one_of(language: Language) -> str:
    commands = [runtime.command for runtime in language.runtimes]
    if len(commands) == 1:
        return commands[0]
    return "one of " + ", ".join(commands[:-1]) + " or " + commands[-1]


def detect_runtimes(view: ExecutorPack) -> list[RuntimeStatus]:
    """Every active language with the runtime that would run it (for `capy doctor`)."""
    statuses = []
    seen: set[str] = set()
    for language in view.by_name.values():
        if language.language in seen:
            continue
        seen.add(language.language)
        candidates = tuple(runtime.command for runtime in language.runtimes)
        try:
            found = resolve_runtime(language)
        except ExecutorError:
            statuses.append(RuntimeStatus(language.language, None, None, candidates))
            continue
        statuses.append(
            RuntimeStatus(language.language, found.plan.command, found.executable, candidates)
        )
    return statuses


def clear_cache() -> None:
    _which.cache_clear()
