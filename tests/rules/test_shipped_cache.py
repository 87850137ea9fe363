"""The shipped packs parsed once per version: read back, they give the very same rule set."""

from __future__ import annotations

import pytest

from capy.config.paths import data_dir
from capy.rules import ruleset as ruleset_module
from capy.rules.backtracking import risky_shape


def _fresh_process() -> None:
    ruleset_module._shipped_files_cached.cache_clear()
    ruleset_module._SCHEMA_MEMO.clear()
    risky_shape.cache_clear()


def _entries():
    return sorted((data_dir() / "cache" / "rules-shipped").glob("*.json"))


@pytest.fixture
def overlay(user_rules_dir):
    path = user_rules_dir / "tighter.yaml"
    path.write_text(
        "pack: tighter\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: A user overlay that changes one limit.\nrequires: '>=0.1'\n"
        "extends: executor\npatch:\n  limits:\n    timeout:\n      default_seconds: 20\n",
        encoding="utf-8",
    )
    return path


def test_a_build_writes_the_cache_and_a_fresh_process_reads_back_the_same_rules(overlay):
    _fresh_process()
    parsed = ruleset_module.build_ruleset([(overlay, "user")], shipped_cache=False)
    assert not _entries(), "a build told not to use the cache leaves none"
    _fresh_process()
    ruleset_module.build_ruleset([(overlay, "user")])
    [entry] = _entries()
    _fresh_process()
    read_back = ruleset_module.build_ruleset([(overlay, "user")])
    assert read_back.ok and parsed.ok
    assert read_back.index_version == parsed.index_version
    assert {name: pack.data for name, pack in read_back.packs.items()} == {
        name: pack.data for name, pack in parsed.packs.items()
    }
    assert [pack.loaded for pack in read_back.files] == [pack.loaded for pack in parsed.files]
    assert _entries() == [entry]


def test_an_overlay_error_is_located_the_same_way_with_the_cache(user_rules_dir):
    broken = user_rules_dir / "broken.yaml"
    broken.write_text(
        "pack: broken\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: An overlay with a misspelt key.\nrequires: '>=0.1'\n"
        "extends: search\npatch:\n  limmits: {}\n",
        encoding="utf-8",
    )
    _fresh_process()
    cold = ruleset_module.build_ruleset([(broken, "user")], shipped_cache=False)
    _fresh_process()
    ruleset_module.build_ruleset([(broken, "user")])
    _fresh_process()
    warm = ruleset_module.build_ruleset([(broken, "user")])
    assert not cold.ok
    assert warm.diagnostics == cold.diagnostics


@pytest.mark.parametrize("garbage", ["", "{", "[]", '{"key": 1}', '{"key": "x", "packs": 3}'])
def test_an_unreadable_entry_is_ignored_and_replaced(overlay, garbage):
    _fresh_process()
    expected = ruleset_module.build_ruleset([(overlay, "user")])
    [entry] = _entries()
    entry.write_text(garbage, encoding="utf-8")
    _fresh_process()
    again = ruleset_module.build_ruleset([(overlay, "user")])
    assert again.ok and again.index_version == expected.index_version
    assert len(_entries()) == 1


def test_a_process_that_outlives_an_upgrade_parses_the_new_packs(tmp_path, monkeypatch):
    # A server running while capy is upgraded (or a checkout changes) must not keep serving,
    # and writing to the disk cache under the new files' key, the packs it parsed at start.
    from capy.rules import resources

    copies = []
    for entry in resources.shipped_pack_files():
        copy = tmp_path / entry.name
        copy.write_bytes(entry.read_bytes())
        copies.append(copy)
    monkeypatch.setattr(ruleset_module, "shipped_pack_files", lambda: copies)
    monkeypatch.setattr(resources, "shipped_pack_files", lambda: copies)
    _fresh_process()
    [retention] = [pack for pack in ruleset_module.shipped_files(False) if pack.name == "retention"]
    edited = tmp_path / "retention.yaml"
    text = edited.read_text(encoding="utf-8")
    old_version = retention.loaded.data["version"]
    edited.write_text(text.replace(f"version: {old_version}", "version: 99.0.0", 1), "utf-8")
    [after] = [pack for pack in ruleset_module.shipped_files(False) if pack.name == "retention"]
    assert after.loaded.data["version"] == "99.0.0"
    _fresh_process()
