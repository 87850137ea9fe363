"""The environment a sandboxed call sees: the pack's env rules, plus capy's own markers."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from capy.config.names import secret_env_names
from capy.executor.processes import MARKER_ENV
from capy.rules.views.executor import ExecutorPack

_cache: dict[tuple[int, tuple[tuple[str, str], ...]], tuple[ExecutorPack, dict[str, str]]] = {}
_CACHE_SIZE = 8


def _sanitised(view: ExecutorPack, snapshot: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Cached per (pack view, environment): rebuilding the folded name sets on every call costs
    more than the rest of a short call's bookkeeping. Keyed by the view's identity (hashing a
    frozen pydantic model walks all of it); the entry holds the view so the id is not reused."""
    key = (id(view), snapshot)
    hit = _cache.get(key)
    if hit is not None and hit[0] is view:
        return hit[1]
    case_insensitive = sys.platform == "win32"
    env = view.env.build(dict(snapshot), case_insensitive=case_insensitive)
    _drop_capy_secrets(env, case_insensitive=case_insensitive)
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    _cache[key] = (view, env)
    return env


def _drop_capy_secrets(env: dict[str, str], *, case_insensitive: bool) -> None:
    """capy's keys never reach the code it runs, whatever the pack's strip rules or an overlay
    say: that code is the agent's, and what it prints goes back to the agent."""
    secret = secret_env_names()
    for name in list(env):
        if (name.upper() if case_insensitive else name) in secret:
            del env[name]


def sandbox_environment(
    view: ExecutorPack,
    marker: str,
    *,
    file_path: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Inherited (or passthrough-only) env, stripped, overridden, plus the call's marker; capy's
    own secret settings are dropped even when a rule passes them through.

    The marker is what finds this call's processes again after they escape the process group;
    the file path is how `execute_file` hands a file over without quoting it into source code.
    Both are set after the pack's rules, so no user environment can spoof them.
    """
    snapshot = tuple((os.environ if environ is None else environ).items())
    env = dict(_sanitised(view, snapshot))
    env[MARKER_ENV] = marker
    if file_path is not None:
        env[view.file_content.path_env] = file_path
    else:
        env.pop(view.file_content.path_env, None)
    return env
