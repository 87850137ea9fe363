"""index_version: stable across formatting, sensitive to index-shaping behaviour only."""

from __future__ import annotations

import random
import re
from io import StringIO
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from capy.cli import main
from capy.rules import build_ruleset
from capy.rules.resources import shipped_rules


def _shipped_text(name: str) -> str:
    return (shipped_rules() / f"{name}.yaml").read_text(encoding="utf-8")


def _version(*files: Path) -> str:
    ruleset = build_ruleset([(path, "path") for path in files])
    assert ruleset.ok, [item.render() for item in ruleset.diagnostics]
    return ruleset.index_version


def _shuffled(node, rng: random.Random):
    if isinstance(node, dict):
        items = list(node.items())
        rng.shuffle(items)
        return {key: _shuffled(value, rng) for key, value in items}
    if isinstance(node, list):
        return [_shuffled(item, rng) for item in node]
    return node


def _dump(data, flow: bool) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    # Wide enough that ruamel never folds a line: its fold of a double-quoted scalar just after
    # an escaped backslash (a pattern's `\\w` came back as `\\ w`) does not read back as written.
    yaml.width = 2**31
    buffer = StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def _shaping_packs() -> list[str]:
    ruleset = build_ruleset()
    return sorted(name for name, pack in ruleset.packs.items() if pack.data.get("shapes_index"))


def _other_packs() -> list[str]:
    ruleset = build_ruleset()
    return sorted(name for name, pack in ruleset.packs.items() if not pack.data.get("shapes_index"))


def test_hash_command_prints_the_index_version(capsys):
    assert main(["rules", "hash"]) == 0
    printed = capsys.readouterr().out.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", printed)
    assert printed == build_ruleset().index_version


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), flow=st.booleans())
def test_key_order_comments_and_layout_do_not_change_the_hash(tmp_path_factory, seed, flow):
    baseline = build_ruleset().index_version
    folder = tmp_path_factory.mktemp("reformatted")
    rng = random.Random(seed)
    files = []
    for name in _shaping_packs():
        data = YAML(typ="safe").load(_shipped_text(name))
        path = folder / f"{name}.yaml"
        path.write_text(_dump(_shuffled(data, rng), flow), encoding="utf-8")
        files.append(path)
    assert _version(*files) == baseline


def test_prose_and_examples_do_not_change_the_hash(tmp_path):
    baseline = build_ruleset().index_version
    name = _shaping_packs()[0]
    data = YAML(typ="safe").load(_shipped_text(name))
    data["description"] = "A rewritten description that says the same thing in other words."

    def reword(node):
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                node["description"] = node["description"] + " (reworded)"
            for value in node.values():
                reword(value)
        elif isinstance(node, list):
            for item in node:
                reword(item)

    reword(data)
    path = tmp_path / f"{name}.yaml"
    path.write_text(_dump(data, flow=False), encoding="utf-8")
    assert _version(path) == baseline


def _overlay(tmp_path: Path, extends: str, body: str) -> Path:
    path = tmp_path / f"change-{extends}.yaml"
    path.write_text(
        f"pack: change-{extends}\nschema: overlay.v1\nversion: 1.0.0\n"
        f"description: Changes one thing in {extends} for the hash tests.\n"
        f'requires: ">=0.1"\nextends: {extends}\n{body}',
        encoding="utf-8",
    )
    return path


def _first_rule_id(name: str) -> str:
    from capy.rules.overlays import iter_rules

    return next(iter_rules(build_ruleset().packs[name].data))[0]


def test_an_index_shaping_change_changes_the_hash(tmp_path):
    baseline = build_ruleset().index_version
    changed = _overlay(tmp_path, "chunking", "patch:\n  max_chunk_bytes: 2048\n")
    assert _version(changed) != baseline
    for name in _shaping_packs():
        disabled = _overlay(tmp_path, name, f"disable: [{_first_rule_id(name)}]\n")
        assert _version(disabled) != baseline, name


def test_changes_to_packs_that_do_not_shape_the_index_keep_the_hash(tmp_path):
    baseline = build_ruleset().index_version
    others = [name for name in _other_packs() if _first_rule_id_or_none(name)]
    assert others, "expected at least one pack with rules that does not shape the index"
    for name in others:
        disabled = _overlay(tmp_path, name, f"disable: [{_first_rule_id(name)}]\n")
        assert _version(disabled) == baseline, name


def _first_rule_id_or_none(name: str) -> str | None:
    from capy.rules.overlays import iter_rules

    return next((rule_id for rule_id, _ in iter_rules(build_ruleset().packs[name].data)), None)


def test_a_tally_rule_change_keeps_the_hash_and_a_chunking_rule_change_does_not(tmp_path):
    """The tally rules are read only by the intent reply, so changing one must not re-chunk
    every store; the error rules beside them cut log chunks, so changing one must."""
    from capy.rules.overlays import iter_rules

    baseline = build_ruleset().index_version
    log = build_ruleset().packs["chunking"].data["log"]
    tally = next(rule_id for rule_id, _ in iter_rules({"rules": log["tally_rules"]}))
    error = next(rule_id for rule_id, _ in iter_rules({"rules": log["error_rules"]}))
    assert _version(_overlay(tmp_path, "chunking", f"disable: [{tally}]\n")) == baseline
    added = (
        "patch:\n  log:\n    tally_rules:\n      - id: chunking.tally-hash-test\n"
        "        status: active\n        since: 1.9.0\n"
        "        description: A tally rule added for the hash test.\n"
        "        says: counts\n        kind: regex\n"
        "        pattern: '^\\d{1,9} widgets counted'\n"
        "        examples:\n          match: ['3 widgets counted']\n"
        "          no_match: ['none']\n"
    )
    assert _version(_overlay(tmp_path, "chunking", added)) == baseline
    assert _version(_overlay(tmp_path, "chunking", f"disable: [{error}]\n")) != baseline


def test_an_overlay_cannot_declare_a_section_answer_time(tmp_path):
    patched = _overlay(tmp_path, "chunking", "patch:\n  answer_time_sections: [log]\n")
    ruleset = build_ruleset([(patched, "path")])
    assert not ruleset.ok
    assert any("answer_time_sections" in item.render() for item in ruleset.diagnostics)
