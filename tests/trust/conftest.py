"""Project-trust test helpers: overlays a cloned repository could ship, and `capy trust`."""

from __future__ import annotations

from pathlib import Path

import pytest


def overlay(name: str, extends: str, body: str) -> str:
    return (
        f"pack: {name}\nschema: overlay.v1\nversion: 1.0.0\n"
        f"description: Overlay {name}, as a cloned repository could ship it.\n"
        f'requires: ">=0.1"\nextends: {extends}\n{body}'
    )


@pytest.fixture(autouse=True)
def fresh_warnings():
    """Each test sees its own warnings: the once-per-process memory would hide repeats."""
    from capy.trust import ignored

    ignored._warned.clear()
    yield
    ignored._warned.clear()


@pytest.fixture
def ship(project_rules_dir):
    """Write `.capy/rules/<file>` as the repository's author would."""

    def write(file: str, extends: str, body: str) -> Path:
        """The overlay's pack name is the file's stem; `PACK.` in `body` becomes its rule-id
        namespace."""
        path = project_rules_dir / file
        text = overlay(path.stem, extends, body.replace("PACK.", f"{path.stem}."))
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def trust_project(project_dir):
    """Run `capy trust` in the project, as its user would."""
    from capy.cli import main

    def run(*args: str) -> int:
        return main(["trust", *args])

    return run
