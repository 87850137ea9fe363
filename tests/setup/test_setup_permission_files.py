"""Claude Code's settings locations come from the platforms pack, in its precedence order."""

from __future__ import annotations

from capy.security.settings_files import Scope, settings_files


def test_locations_follow_the_pack_highest_first(workspace, tmp_path) -> None:
    managed = tmp_path / "managed"
    (managed / "managed-settings.d").mkdir(parents=True)
    (managed / "managed-settings.d" / "20-team.json").write_text("{}")
    (managed / "managed-settings.d" / "10-org.json").write_text("{}")
    files = settings_files(workspace.project, workspace.home, managed)
    assert [(file.scope, file.path) for file in files] == [
        (Scope.MANAGED, managed / "managed-settings.json"),
        (Scope.MANAGED, managed / "managed-settings.d" / "10-org.json"),
        (Scope.MANAGED, managed / "managed-settings.d" / "20-team.json"),
        (Scope.LOCAL, workspace.project / ".claude" / "settings.local.json"),
        (Scope.PROJECT, workspace.project / ".claude" / "settings.json"),
        (Scope.USER, workspace.home / ".claude" / "settings.json"),
    ]
    assert [file.root for file in files[-3:]] == [workspace.project] * 2 + [workspace.home]


def test_a_broken_overlay_does_not_hide_deny_rules(workspace, tmp_path) -> None:
    from capy.security import check_command

    overlay = workspace.project / ".capy" / "rules" / "broken.yaml"
    overlay.parent.mkdir(parents=True)
    overlay.write_text("pack: [\n")
    workspace.write(".claude/settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    from capy.rules import build_ruleset

    decision = check_command(
        "rm -rf build", project_dir=workspace.project, managed_dir=tmp_path, ruleset=build_ruleset()
    )
    assert decision.decision == "deny"
    assert decision.rule == "Bash(rm:*)"
