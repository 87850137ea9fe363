"""The parsed permission rules are reused per process, and any change to a settings file (an
edit, a same-size rewrite within one timestamp tick, a chmod, a new or removed file) takes
effect on the very next call. Real files, real calls."""

from __future__ import annotations

import json
import os

import pytest

from capy.security import policy_memo


@pytest.fixture(autouse=True)
def _fresh_memo():
    policy_memo.forget_policies()
    yield
    policy_memo.forget_policies()


@pytest.fixture
def settled(monkeypatch):
    """Files count as still at once, so the memo is used as it is for files edited long ago."""
    monkeypatch.setattr(policy_memo, "RACY_WINDOW_NS", -(10**12))


def _load(settings):
    from capy.security.policy import load_policy

    return load_policy(settings.project, managed_dir=settings.managed, ruleset=settings.ruleset)


def test_unchanged_files_are_parsed_once(settings, settled):
    settings.write("project", deny=["Bash(make:*)"])
    first, second = _load(settings), _load(settings)
    assert first.rules[0] is second.rules[0]
    assert first is not second and first.rules is not second.rules


def test_an_edit_takes_effect_on_the_next_call(settings, settled):
    settings.write("project", deny=["Bash(make:*)"])
    assert settings.check_command("make").decision == "deny"
    settings.write("project", allow=["Bash(make:*)"])
    assert settings.check_command("make").decision == "allow"


def test_a_same_size_rewrite_in_one_tick_is_seen(settings):
    # Same size, same inode, written at once: only the racy-timestamp rule tells them apart.
    path = settings.write("project", deny=["Bash(make:*)"])
    assert settings.check_command("make").decision == "deny"
    with path.open("r+") as handle:
        handle.write(json.dumps({"permissions": {"deny": ["Bash(nake:*)"]}}))
    assert settings.check_command("make").decision == "none"
    assert settings.check_command("nake").decision == "deny"


def test_a_new_or_removed_file_takes_effect_on_the_next_call(settings, settled):
    assert settings.check_command("curl x").decision == "none"
    user = settings.write("user", deny=["Bash(curl:*)"])
    assert settings.check_command("curl x").decision == "deny"
    drop_in = settings.managed / "managed-settings.d" / "10-more.json"
    drop_in.parent.mkdir(parents=True)
    drop_in.write_text(json.dumps({"permissions": {"ask": ["Bash(wget:*)"]}}))
    assert settings.check_command("wget x").decision == "ask"
    user.unlink()
    assert settings.check_command("curl x").decision == "none"


def test_a_file_made_unreadable_is_seen_on_the_next_call(settings, settled):
    settings.write("local", allow=["Bash(make:*)"])
    path = settings.write("project", deny=["Bash(curl:*)"])
    assert settings.check_command("make").decision == "allow"
    path.write_text("{ not json")
    os.utime(path, ns=(0, 0))  # an old mtime: the content and ctime still differ
    # A file that may hold deny rules and cannot be read turns every allow into ask.
    assert settings.check_command("make").decision == "ask"


def test_execute_refuses_on_the_call_after_a_deny_is_written(project_dir, settled):
    from capy.api.execute import execute_code
    from capy.api.workspace import Workspace

    workspace = Workspace(project_dir)
    assert not execute_code(workspace, language="shell", code="echo hi").is_error
    settings = project_dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(echo:*)"]}}))
    refused = execute_code(workspace, language="shell", code="echo hi")
    assert refused.is_error and "echo" in refused.text
    settings.write_text(json.dumps({"permissions": {"deny": []}}))
    assert not execute_code(workspace, language="shell", code="echo hi").is_error


def test_where_the_files_are_is_found_once_per_process(settings, settled, monkeypatch):
    """A call costs the stat calls that check the files; the project's root and the platforms
    pack's locations are looked up once, not on every call."""
    from capy.security import settings_files

    lookups = []
    real = settings_files.permission_locations

    def counted(*args, **kwargs):
        lookups.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(settings_files, "permission_locations", counted)
    settings.write("project", deny=["Bash(make:*)"])
    for _ in range(3):
        assert settings.check_command("make").decision == "deny"
    assert len(lookups) == 1


def test_a_drop_in_added_beside_another_takes_effect_on_the_next_call(settings, settled):
    folder = settings.managed / "managed-settings.d"
    folder.mkdir(parents=True)
    (folder / "10-first.json").write_text(json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}}))
    assert settings.check_command("curl x").decision == "deny"
    assert settings.check_command("wget x").decision == "none"
    (folder / "20-second.json").write_text(json.dumps({"permissions": {"ask": ["Bash(wget:*)"]}}))
    assert settings.check_command("wget x").decision == "ask"
    (folder / "10-first.json").unlink()
    assert settings.check_command("curl x").decision == "none"
