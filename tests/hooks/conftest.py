"""Hook tests run real `capy hook` processes and `capy.hooks.handle` against a private project
(a `.git` folder marks its root) and a private home, with the golden payloads under payloads/."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def project(warm_project) -> Path:
    return warm_project
