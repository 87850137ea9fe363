"""Every schema has `.ok` and `.fail` fixtures; each `.ok` validates and each `.fail` does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.rules.packfile import read_path
from capy.rules.schemas import schema_names, schema_problems, schema_registry

FIXTURES = Path(__file__).parent / "fixtures"
# common.v1 holds only shared definitions; it is exercised through every other schema.
DEFINITIONS_ONLY = {"common.v1"}
PACK_SCHEMAS = [name for name in schema_names() if name not in DEFINITIONS_ONLY]


def _cases(suffix: str) -> list[tuple[str, Path]]:
    return sorted(
        (folder.name, path)
        for folder in FIXTURES.iterdir()
        if folder.is_dir()
        for path in folder.glob(f"*{suffix}")
    )


def _problems(schema: str, path: Path):
    pack, parse_problems = read_path(path, "path")
    if parse_problems:
        return parse_problems
    return schema_problems(pack.data, schema)


@pytest.mark.parametrize("schema", PACK_SCHEMAS)
def test_every_schema_has_fixtures(schema):
    folder = FIXTURES / schema
    assert len(list(folder.glob("*.ok.yaml"))) >= 1, f"add ok fixtures under {folder}"
    assert len(list(folder.glob("*.fail.yaml"))) >= 1, f"add fail fixtures under {folder}"


@pytest.mark.parametrize(
    ("schema", "path"), _cases(".ok.yaml"), ids=lambda v: getattr(v, "name", v)
)
def test_ok_fixture_validates(schema, path):
    assert _problems(schema, path) == []


@pytest.mark.parametrize(
    ("schema", "path"), _cases(".fail.yaml"), ids=lambda v: getattr(v, "name", v)
)
def test_fail_fixture_fails(schema, path):
    assert _problems(schema, path), f"{path.name} should fail {schema}"


def _open_objects(node, where="#"):
    """Object schemas that declare properties but leave unknown keys allowed."""
    if isinstance(node, dict):
        declares = "properties" in node
        closed = (
            node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False
        )
        if declares and not closed and where.count("/") > 0 and not _inside_composition(where):
            yield where
        for key, value in node.items():
            yield from _open_objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _open_objects(value, f"{where}/{index}")


def _inside_composition(where: str) -> bool:
    # A branch of allOf/anyOf/oneOf, or a reusable definition meant to be composed, is closed
    # by the schema that uses it through unevaluatedProperties.
    return any(part in where for part in ("/allOf/", "/anyOf/", "/oneOf/", "/$defs/"))


@pytest.mark.parametrize("schema", PACK_SCHEMAS)
def test_schemas_are_closed(schema):
    document = schema_registry()[1][schema]
    assert (
        document.get("unevaluatedProperties") is False
        or document.get("additionalProperties") is False
    )
    assert list(_open_objects(document)) == []
