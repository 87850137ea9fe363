"""Strict YAML loading: positions kept, duplicate keys and silent coercions refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.rules.packfile import read_pack_file
from capy.rules.yamlload import Position, YamlLoadError, load_yaml


def test_positions_are_one_based_for_values_and_keys():
    loaded = load_yaml("pack: x\nrules:\n  - id: x.a\n    status: active\n")
    assert loaded.data == {"pack": "x", "rules": [{"id": "x.a", "status": "active"}]}
    assert loaded.positions[("pack",)] == Position(1, 7)
    assert loaded.positions[("rules", 0)] == Position(3, 5)
    assert loaded.key_positions[("rules", 0, "status")] == Position(4, 5)
    assert loaded.position_of(("rules", 0, "missing", 3)) == Position(3, 5)


@pytest.mark.parametrize(
    ("text", "code", "line", "column"),
    [
        ("a: 1\na: 2\n", "duplicate-key", 2, 1),
        ("a: [1\n", "yaml-syntax", 2, 1),
        ("a:\n  b: 1\n c: 2\n", "yaml-syntax", 3, 2),
        ("since: 2024-01-01\n", "silent-coercion", 1, 8),
        ("1: x\n", "wrong-type", 1, 1),
        ("a: !custom x\n", "yaml-tag", 1, 4),
        ("a:\n\tb: 1\n", "yaml-syntax", 2, 1),
        ("--- 1\n--- 2\n", "yaml-syntax", 1, 1),
    ],
)
def test_strict_loader_refuses_with_a_position(text, code, line, column):
    with pytest.raises(YamlLoadError) as caught:
        load_yaml(text)
    assert (caught.value.code, caught.value.position) == (code, Position(line, column))
    assert caught.value.hint


def test_standard_tags_and_yaml_1_2_booleans_are_plain():
    loaded = load_yaml("a: !!str 3\nb: yes\nc: true\n")
    assert loaded.data == {"a": "3", "b": "yes", "c": True}


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_a_pack_or_located_diagnostics(text):
    pack, problems = read_pack_file(text, "fuzz.yaml", "path")
    assert (pack is None) == bool(problems)
    for problem in problems:
        assert problem.file == "fuzz.yaml"
        assert problem.line >= 1 and problem.column >= 1
        assert problem.message


# Printable text: YAML normalises line-break characters such as U+0085 inside plain scalars.
printable = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20)
yaml_scalars = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), printable
)
yaml_docs = st.recursive(
    yaml_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(printable.filter(bool), children, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(yaml_docs)
def test_structured_documents_round_trip_through_the_strict_loader(document):
    from io import StringIO

    from ruamel.yaml import YAML

    buffer = StringIO()
    dumper = YAML(typ="safe", pure=True)
    # Block style: the flow-style emitter writes `{doc: ?0}`, which no YAML parser accepts.
    dumper.default_flow_style = False
    dumper.dump({"doc": document}, buffer)
    assert load_yaml(buffer.getvalue()).data == {"doc": document}
