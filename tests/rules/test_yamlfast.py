"""The fast YAML path (libyaml) gives exactly what the strict loader gives, or declines."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.rules.resources import shipped_pack_files
from capy.rules.yamlfast import fast_load
from capy.rules.yamlload import (
    MAX_PACK_DEPTH,
    MAX_PACK_NODES,
    YamlLoadError,
    load_yaml,
    load_yaml_strict,
)

REPO = Path(__file__).resolve().parents[2]


def _typed(value):
    """Data with every scalar's type spelt out: 1, 1.0 and True compare equal in Python."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


def _fast(text):
    return fast_load(text, MAX_PACK_DEPTH, MAX_PACK_NODES)


def _agrees(text: str) -> bool:
    """Asserts the fast path agrees with the strict loader; says whether it answered."""
    fast = _fast(text)
    if fast is None:
        return False
    strict = load_yaml_strict(text)  # the fast path never answers a text the strict one refuses
    assert _typed(fast.data) == _typed(strict.data)
    assert fast.positions == strict.positions
    assert fast.key_positions == strict.key_positions
    return True


def test_fast_path_is_available():
    """Without libyaml every fresh home parses the packs at the strict loader's speed."""
    assert _fast("a: 1\n") is not None, "PyYAML with libyaml (yaml.cyaml) is not installed"


@pytest.mark.parametrize("entry", shipped_pack_files(), ids=lambda entry: entry.name)
def test_every_shipped_pack_takes_the_fast_path_and_agrees(entry):
    assert _agrees(entry.read_text(encoding="utf-8"))


def _fixture_files():
    folders = [REPO / "tests" / "rules" / "fixtures", REPO / "tests" / "schemas" / "fixtures"]
    return sorted(path for folder in folders for path in folder.rglob("*.yaml"))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda path: path.name)
def test_fixture_packs_agree_or_go_to_the_strict_loader(path):
    text = path.read_text(encoding="utf-8")
    try:
        load_yaml_strict(text)
    except YamlLoadError:
        assert _fast(text) is None
        return
    _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: -2\nc: +3\nd: 0\ne: 1.5\nf: -.5\ng: 1.\nh: 2.5e3\n",
        "a: true\nb: False\nc: TRUE\nd: null\ne: ~\nf: Null\n",
        "on: yes\noff: no\ny: n\n",  # YAML 1.2: all strings, unlike PyYAML's own resolver
        "a: 'single ''quoted'''\nb: \"double \\t \\u00e9 \\n\"\nc: \"1\"\n",
        "a: |\n  literal\n   kept\n\nb: >-\n  folded\n  text\n\nc: |+\n  keep\n\n",
        "a: plain\n  continued line\nb: x # comment\n# trailing\n",
        "list:\n- a\n- b: 1\n  c: [1, 2, {d: e}]\n-   - nested\n",
        "a: {x: 1, y: [a, 'b', \"c\"]}\n",
        "\ufeffa: 1\r\nb:\r\n  - 2\r\n",
        "key with spaces: value: with colon\n'quoted key': 1\n\"\": empty key\n",
        "a: 0777\nb: 1_000\nc: 0x1F\nd: .inf\ne: 1e5\nf: 0o17\n",  # declined: rare spellings
        "a: &x 1\nb: *x\n",  # declined: aliases
        "a: !!str 3\nb: ! x\n",  # declined: explicit tags
        "%YAML 1.1\n---\na: yes\n",  # declined: directives
        "a:\nb: 2\n",  # declined: an empty value
        "<<: {a: 1}\n",  # declined: a merge key
        "just a scalar\n",
        "- 1\n- 2\n",
        ">\n# a text line, not a comment, at the root\n",  # declined: a block scalar at the root
        "a: > # a comment after the header\n  b\n",
    ],
)
def test_tricky_spellings_agree_or_are_declined(text):
    _agrees(text)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("a: 1\na: 2\n", "duplicate-key"),
        ("since: 2024-01-01\n", "silent-coercion"),
        ("1: x\n", "wrong-type"),
        ("true: x\n", "wrong-type"),
        ("a: !custom x\n", "yaml-tag"),
        ("a:\n\tb: 1\n", "yaml-syntax"),
        ("--- 1\n--- 2\n", "yaml-syntax"),
        ("a: [1\n", "yaml-syntax"),
        ("a: > \t\n  b\n", "yaml-syntax"),  # a tab after a block header
        ("-_\n", "yaml-syntax"),  # ruamel itself faults, reading `-_` as an empty number
        ("a: " + "[" * (MAX_PACK_DEPTH + 1) + "]" * (MAX_PACK_DEPTH + 1) + "\n", "yaml-too-deep"),
        (
            "x: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "y: [" + ", ".join(["*a"] * 20000) + "]\n",
            "yaml-too-large",
        ),
    ],
)
def test_faults_are_left_to_the_strict_loader_and_its_messages(text, code):
    assert _fast(text) is None
    with pytest.raises(YamlLoadError) as caught:
        load_yaml(text)
    assert caught.value.code == code


# A YAML-heavy alphabet finds the corners of both parsers far more often than any text does.
yamlish = st.text(st.sampled_from(list("ab1.-:#'\"[]{},&*!|>?% \n\t~e0_")), max_size=80)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(yamlish, st.text(max_size=200)))
def test_any_text_the_fast_path_answers_is_read_as_the_strict_loader_reads_it(text):
    try:
        strict = load_yaml_strict(text)
    except YamlLoadError:
        assert _fast(text) is None
        return
    fast = _fast(text)
    if fast is not None:
        assert _typed(fast.data) == _typed(strict.data)
        assert fast.positions == strict.positions
        assert fast.key_positions == strict.key_positions


printable = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20)
documents = st.recursive(
    st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), printable),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(printable.filter(bool), children, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(documents, st.booleans())
def test_dumped_documents_agree(document, flow):
    from ruamel.yaml import YAML

    buffer = StringIO()
    dumper = YAML(typ="safe", pure=True)
    dumper.default_flow_style = flow and not isinstance(document, dict)
    dumper.dump({"doc": document}, buffer)
    _agrees(buffer.getvalue())


@pytest.mark.parametrize("text", [": # !:]e\n  &#0-- ?|'_e{\n\n- '", "?\n- x: e\\-\n"])
def test_texts_that_trip_the_strict_reader_itself_give_one_sentence(text):
    """Found by fuzzing the two paths against each other: ruamel raised TypeError or
    NotImplementedError here, which reached the user as a traceback."""
    with pytest.raises(YamlLoadError) as caught:
        load_yaml(text)
    assert caught.value.code == "yaml-syntax" and caught.value.hint
