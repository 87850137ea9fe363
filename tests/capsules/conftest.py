from __future__ import annotations

import pytest

from capy.capsules import open_capsules


@pytest.fixture
def capsules(project_dir):
    """A fresh capsule log under the test's isolated data dir, for the test's project."""
    with open_capsules(project_dir=project_dir) as store:
        yield store
