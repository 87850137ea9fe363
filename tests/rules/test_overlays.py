"""Overlay semantics: extend, override by id, disable by id, precedence, chains and their limits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capy.cli import main
from capy.rules import RulesError, load_rules
from capy.rules.overlays import MAX_EXTENDS_DEPTH, find_rule
from capy.rules.ruleset import active_only

FIXTURES = Path(__file__).parent / "fixtures" / "overlays"


def overlay(name: str, extends: str, body: str) -> str:
    return (
        f"pack: {name}\nschema: overlay.v1\nversion: 1.0.0\n"
        f"description: Test overlay {name} for the overlay semantics tests.\n"
        f'requires: ">=0.1"\nextends: {extends}\n{body}'
    )


def test_user_overlay_overrides_extends_and_disables(user_rules_dir):
    shutil.copy(FIXTURES / "valid" / "smaller-chunks.yaml", user_rules_dir / "team.yaml")
    pack = load_rules().pack("chunking")
    assert pack.data["max_chunk_bytes"] == 2048
    assert [overlay.file for overlay in pack.overlays] == ["~/.config/capy/rules/team.yaml"]
    _, overridden = find_rule(pack.data, "chunking.log-python-traceback")
    assert overridden["description"] == "Python tracebacks, overridden by the team overlay."
    assert overridden["kind"] == "regex"  # untouched fields survive a field-level override
    _, added = find_rule(pack.data, "team-chunking.deploy-failed")
    assert added["pattern"] == r"(?m)^DEPLOY FAILED\b"
    _, disabled = find_rule(pack.data, "chunking.detect-diff")
    assert disabled["status"] == "disabled"
    assert find_rule(active_only(pack.data), "chunking.detect-diff") is None


def test_disabled_rules_are_left_out_of_the_typed_view(user_rules_dir):
    shutil.copy(FIXTURES / "valid" / "smaller-chunks.yaml", user_rules_dir / "team.yaml")
    view = load_rules().view("chunking")
    dumped = view.model_dump_json()
    assert "chunking.detect-diff" not in dumped
    assert "team-chunking.deploy-failed" in dumped


def test_project_overlay_wins_over_user_overlay(user_rules_dir, project_rules_dir):
    (user_rules_dir / "a.yaml").write_text(
        overlay("mine", "chunking", "patch:\n  max_chunk_bytes: 2048\n")
    )
    (project_rules_dir / "a.yaml").write_text(
        overlay("ours", "chunking", "patch:\n  max_chunk_bytes: 1024\n")
    )
    pack = load_rules().pack("chunking")
    assert pack.data["max_chunk_bytes"] == 1024
    assert [o.name for o in pack.overlays] == ["mine", "ours"]
    file, position = pack.locate(("max_chunk_bytes",))
    assert file == ".capy/rules/a.yaml" and position.line == 8


def test_an_overlay_can_extend_another_overlay(user_rules_dir, project_rules_dir):
    # The project file sorts first and is applied last anyway: extension order decides.
    (project_rules_dir / "0-child.yaml").write_text(
        overlay("child", "parent", "patch:\n  max_chunk_bytes: 512\n")
    )
    (user_rules_dir / "parent.yaml").write_text(
        overlay("parent", "chunking", "patch:\n  max_chunk_bytes: 3000\n  min_chunk_bytes: 16\n")
    )
    data = load_rules().pack("chunking").data
    assert (data["max_chunk_bytes"], data["min_chunk_bytes"]) == (512, 16)


def test_extension_cycle_is_an_error(user_rules_dir):
    (user_rules_dir / "a.yaml").write_text(
        overlay("ov-a", "ov-b", "disable: [chunking.detect-diff]\n")
    )
    (user_rules_dir / "b.yaml").write_text(
        overlay("ov-b", "ov-a", "disable: [chunking.detect-json]\n")
    )
    with pytest.raises(RulesError) as caught:
        load_rules()
    codes = {item.code for item in caught.value.diagnostics}
    assert codes == {"extends-cycle"}
    assert "ov-a -> ov-b -> ov-a" in caught.value.render()


def test_extension_deeper_than_the_cap_is_an_error(user_rules_dir):
    names = [f"level-{index}" for index in range(MAX_EXTENDS_DEPTH + 1)]
    parents = ["chunking", *names[:-1]]
    for name, parent in zip(names, parents, strict=True):
        (user_rules_dir / f"{name}.yaml").write_text(
            overlay(name, parent, "patch:\n  min_chunk_bytes: 10\n")
        )
    with pytest.raises(RulesError) as caught:
        load_rules()
    deep = [item for item in caught.value.diagnostics if item.code == "extends-too-deep"]
    assert [item.file for item in deep] == [f"~/.config/capy/rules/{names[-1]}.yaml"]


def test_broken_overlay_in_force_is_one_clear_error_from_any_command(user_rules_dir, capsys):
    shutil.copy(FIXTURES / "invalid" / "wrong-type.yaml", user_rules_dir / "broken.yaml")
    code = main(["rules", "list"])
    captured = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in captured.err
    assert "~/.config/capy/rules/broken.yaml:8:20: error[wrong-type]" in captured.err
    assert captured.err.rstrip().splitlines()[-1].startswith("capy: ")


@pytest.mark.parametrize("body", ["disable: 2\n", "patch: 3\n", "patch: [a, b]\ndisable: x\n"])
def test_a_patch_or_disable_of_the_wrong_type_is_reported_not_raised(user_rules_dir, body):
    # Found by the overlay fuzz test: `disable: 2` crashed the merge with a TypeError.
    (user_rules_dir / "odd.yaml").write_text(overlay("odd", "chunking", body), encoding="utf-8")
    with pytest.raises(RulesError) as raised:
        load_rules()
    assert "odd.yaml" in str(raised.value)


def test_load_rules_notices_an_edited_overlay(user_rules_dir):
    path = user_rules_dir / "a.yaml"
    path.write_text(overlay("mine", "chunking", "patch:\n  max_chunk_bytes: 2048\n"))
    assert load_rules().pack("chunking").data["max_chunk_bytes"] == 2048
    assert load_rules() is load_rules()
    path.write_text(overlay("mine", "chunking", "patch:\n  max_chunk_bytes: 1000\n"))
    assert load_rules().pack("chunking").data["max_chunk_bytes"] == 1000


def test_extra_rule_dirs_from_config_are_layered(project_dir, tmp_path):
    from capy.config.paths import user_config_file

    extra = tmp_path / "team-rules"
    extra.mkdir()
    (extra / "t.yaml").write_text(overlay("team", "chunking", "patch:\n  max_chunk_bytes: 1500\n"))
    user_config_file().parent.mkdir(parents=True, exist_ok=True)
    user_config_file().write_text(f'[rules]\nextra_dirs = ["{extra}"]\n')
    assert load_rules(project_dir).pack("chunking").data["max_chunk_bytes"] == 1500
