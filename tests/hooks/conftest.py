"""Hook tests run real `capy hook` processes and `capy.hooks.handle` against a private project
(a `.git` folder marks its root) and a private home, with the golden payloads under payloads/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def rules_cache_file(tmp_path_factory) -> Path:
    """The shipped packs validated once; each test gets a copy of the cache file, as if an
    earlier command had validated them (a full validation per test would take a second)."""
    import os

    home = tmp_path_factory.mktemp("rules-home")
    saved = {key: os.environ.get(key) for key in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")}
    os.environ.update(
        HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config")
    )
    try:
        from capy.rules import ruleset

        ruleset._load_cached.cache_clear()
        ruleset.load_rules(home)
        ruleset._load_cached.cache_clear()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    [cached] = (home / "data" / "capy" / "cache" / "rules").glob("*.json")
    return cached


@pytest.fixture(autouse=True)
def project(isolated_environment, rules_cache_file) -> Path:
    from capy.config.paths import data_dir

    (isolated_environment / ".git").mkdir()
    target = data_dir() / "cache" / "rules"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(rules_cache_file, target / rules_cache_file.name)
    return isolated_environment
