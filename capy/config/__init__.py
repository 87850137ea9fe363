"""User-level configuration: defaults < user config.toml < project files < `CAPY_*` environment.

Exports load lazily: `capy.config.paths` is needed by every hook, pydantic-settings only by the
code paths that read settings, and a hook is a fresh process on every tool call.
"""

from __future__ import annotations

from capy.lazy import lazy_exports

TYPE_CHECKING = False
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
        RedactionSettings,
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
    "RedactionSettings": "settings",
    "RulesSettings": "settings",
    "Settings": "settings",
}

__all__ = [
    "ConfigError",
    "Entry",
    "FetchSettings",
    "HooksSettings",
    "LogLevel",
    "RedactionSettings",
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


__getattr__ = lazy_exports(__name__, {name: f"{__name__}.{home}" for name, home in _HOMES.items()})
