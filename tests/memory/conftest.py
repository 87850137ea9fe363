"""Memory tests use a real capsule log in the test's private home, for a project marked by a
`.git` folder, and feed it capsules the way hooks and the drainer write them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))


@pytest.fixture
def project(warm_project) -> Path:
    return warm_project


@pytest.fixture
def store(project):
    from capy.capsules import open_capsules

    with open_capsules(project_dir=project) as capsules:
        yield capsules
