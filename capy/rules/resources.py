"""Where the shipped packs and schemas live: inside the installed package, via importlib.resources.

`capy/_data/rules` and `capy/_data/schemas` are links to the top-level `rules/` and `schemas/`
folders; wheels carry the files themselves, so the same lookup serves source checkouts, editable
installs and wheels alike, and never depends on the working directory.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable


def shipped_rules() -> Traversable:
    return files("capy") / "_data" / "rules"


def shipped_schemas() -> Traversable:
    return files("capy") / "_data" / "schemas"


def shipped_pack_files() -> list[Traversable]:
    return sorted(
        (entry for entry in shipped_rules().iterdir() if entry.name.endswith(".yaml")),
        key=lambda entry: entry.name,
    )


def shipped_schema_files() -> list[Traversable]:
    return sorted(
        (entry for entry in shipped_schemas().iterdir() if entry.name.endswith(".schema.json")),
        key=lambda entry: entry.name,
    )
