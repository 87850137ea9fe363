"""Stage versions follow only what shapes a stage's rows: recall's section is read at recall
time alone, so changing it rebuilds nothing; a section a stage reads rebuilds that stage."""

from __future__ import annotations

from pathlib import Path

from capy.capsules.versions import current_versions
from capy.rules import build_ruleset


def _versions(tmp_path: Path, body: str) -> dict[str, str]:
    path = tmp_path / "change-capsules.yaml"
    path.write_text(
        "pack: change-capsules\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Changes one capsules section for the stage version tests.\n"
        f'requires: ">=0.1"\nextends: capsules\n{body}',
        encoding="utf-8",
    )
    ruleset = build_ruleset([(path, "path")])
    assert ruleset.ok, [item.render() for item in ruleset.diagnostics]
    return current_versions(ruleset)


def test_a_recall_weight_change_keeps_every_stage_version(tmp_path):
    baseline = current_versions(build_ruleset())
    weight = build_ruleset().packs["capsules"].data["recall"]["weights"]["graph"]
    changed = _versions(tmp_path, f"patch:\n  recall:\n    weights:\n      graph: {weight + 0.1}\n")
    assert changed == baseline


def test_a_shaping_section_change_changes_the_stages_it_shapes(tmp_path):
    baseline = current_versions(build_ruleset())
    length = build_ruleset().packs["capsules"].data["summaries"]["session_min_capsules"]
    changed = _versions(tmp_path, f"patch:\n  summaries:\n    session_min_capsules: {length + 1}\n")
    shaped = {"extract", "link", "summarise"}
    assert all(changed[name] != baseline[name] for name in shaped)
    assert {k: v for k, v in changed.items() if k not in shaped} == {
        k: v for k, v in baseline.items() if k not in shaped
    }
