"""Hook tests run real `capy hook` processes and `capy.hooks.handle` against a private project
(a `.git` folder marks its root) and a private home, with the golden payloads under payloads/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def project(isolated_environment, rules_cache_file) -> Path:
    from capy.config.paths import data_dir

    (isolated_environment / ".git").mkdir()
    target = data_dir() / "cache" / "rules"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(rules_cache_file, target / rules_cache_file.name)
    return isolated_environment
