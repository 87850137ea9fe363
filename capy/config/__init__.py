"""User-level configuration: defaults < user config.toml < project files < `CAPY_*` environment.

Exports load lazily: `capy.config.paths` is needed by every hook, pydantic-settings only by the
code paths that read settings, and a hook is a fresh process on every tool call.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.config.errors import ConfigError
    from capy.config.loader import Entry, ResolvedSettings, load_settings
    from capy.config.paths import (
        config_dir,
        data_dir,
        project_root,
        project_rules_dir,
        user_rules_dir,
    )
    from capy.config.settings import (
        FetchSettings,
        HooksSettings,
        LogLevel,
        RulesSettings,
        Settings,
    )

_HOMES = {
    "ConfigError": "errors",
    "Entry": "loader",
    "ResolvedSettings": "loader",
    "load_settings": "loader",
    "config_dir": "paths",
    "data_dir": "paths",
    "project_root": "paths",
    "project_rules_dir": "paths",
    "user_rules_dir": "paths",
    "FetchSettings": "settings",
    "HooksSettings": "settings",
    "LogLevel": "settings",
    "RulesSettings": "settings",
    "Settings": "settings",
}

__all__ = [
    "ConfigError",
    "Entry",
    "FetchSettings",
    "HooksSettings",
    "LogLevel",
    "ResolvedSettings",
    "RulesSettings",
    "Settings",
    "config_dir",
    "data_dir",
    "load_settings",
    "project_root",
    "project_rules_dir",
    "user_rules_dir",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'capy.config' has no attribute {name!r}")
    return getattr(import_module(f"capy.config.{_HOMES[name]}"), name)
