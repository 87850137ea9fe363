"""Settings files in Claude Code's precedence, read from real files; malformed ones warn once,
name the file, and never weaken a guard."""

from __future__ import annotations

import json

import pytest


def test_deny_in_any_file_beats_allow_in_a_higher_one(settings):
    settings.write("local", allow=["Bash(git push:*)"])
    settings.write("user", deny=["Bash(git push:*)"])
    decision = settings.check_command("git push origin main")
    assert (decision.decision, decision.source) == ("deny", "~/.claude/settings.json")


def test_ask_in_project_beats_allow_in_local(settings):
    settings.write("local", allow=["Bash(npm publish)"])
    settings.write("project", ask=["Bash(npm publish)"])
    decision = settings.check_command("npm publish")
    assert (decision.decision, decision.source) == ("ask", ".claude/settings.json")


def test_same_rule_is_reported_from_the_highest_precedence_file(settings):
    for scope in ("user", "project", "local", "managed"):
        settings.write(scope, deny=["Bash(curl:*)"])
    decision = settings.check_command("curl example.com")
    assert decision.source == str(settings.managed / "managed-settings.json")
    settings.path_for("managed").unlink()
    assert settings.check_command("curl x").source == ".claude/settings.local.json"
    settings.path_for("local").unlink()
    assert settings.check_command("curl x").source == ".claude/settings.json"


def test_managed_drop_ins_are_read(settings):
    drop_in = settings.managed / "managed-settings.d" / "10-security.json"
    drop_in.parent.mkdir(parents=True)
    drop_in.write_text(json.dumps({"permissions": {"deny": ["WebFetch(domain:*.internal)"]}}))
    decision = settings.check_tool("WebFetch", url="https://wiki.corp.internal/page")
    assert (decision.decision, decision.source) == ("deny", str(drop_in))


def test_slash_rules_are_relative_to_the_settings_file(settings):
    settings.write("user", deny=["Edit(/notes/**)"])
    settings.write("project", deny=["Edit(/build/**)"])
    home_note = settings.check_tool("Edit", path=str(settings.home / "notes" / "a.md"))
    assert home_note.decision == "deny"
    assert settings.check_tool("Edit", path="notes/a.md").decision == "none"
    assert settings.check_tool("Edit", path="build/out.js").decision == "deny"


def test_project_dir_argument_finds_the_project_settings(settings, tmp_path):
    other = tmp_path / "other-project"
    (other / ".claude").mkdir(parents=True)
    (other / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(make:*)"]}})
    )
    assert settings.check_command("make").decision == "none"
    assert settings.check_command("make", project_dir=other).decision == "deny"


def test_symlink_into_a_denied_folder_is_denied_and_not_allowed(settings):
    secrets = settings.project / "secrets"
    secrets.mkdir()
    (secrets / "key").write_text("x")
    (settings.project / "src").mkdir()
    (settings.project / "src" / "innocent").symlink_to(secrets / "key")
    settings.write("project", deny=["Read(secrets/**)"], allow=["Read(src/**)"])
    assert settings.check_tool("Read", path="src/innocent").decision == "deny"
    settings.write("project", allow=["Read(src/**)"])
    assert settings.check_tool("Read", path="src/innocent").decision == "none"


def test_invalid_json_warns_once_and_no_longer_allows(settings, capsys):
    settings.write("project", text='{"permissions": {"deny": ["Bash(rm:*)"],}')
    settings.write("local", allow=["Bash(ls)"])
    settings.write("user", deny=["Bash(curl:*)"])
    decision = settings.check_command("ls")
    assert decision.decision == "ask"  # the broken file might have denied it
    assert "could not be read" in decision.reason
    assert settings.check_command("curl x").decision == "deny"  # the other files still apply
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line, however many checks
    assert err.startswith("capy: warning: .claude/settings.json is not valid JSON (line 1")
    assert decision.warnings and ".claude/settings.json" in decision.warnings[0]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1, 2]", "is not a JSON object"),
        ('{"permissions": ["Bash"]}', '"permissions" is not an object'),
        ('{"permissions": {"deny": "Bash(rm:*)"}}', '"permissions.deny" is not a list'),
        ("\udcff", "is not valid JSON"),
    ],
)
def test_wrong_shapes_warn_naming_the_file(settings, capsys, text, problem):
    path = settings.path_for("project")
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    settings.write("user", allow=["Bash(ls)"])
    assert settings.check_command("ls").decision == "ask"
    err = capsys.readouterr().err
    assert f".claude/settings.json {problem}" in err or "cannot be read" in err


def test_malformed_deny_rule_fails_closed_for_its_tool(settings, capsys):
    settings.write("project", deny=["Bash(rm -rf", "WebFetch(example.com)"], allow=["Bash"])
    decision = settings.check_command("ls")
    assert (decision.decision, decision.rule) == ("deny", "Bash(rm -rf")
    assert "fails closed" in decision.reason
    fetch = settings.check_tool("WebFetch", url="https://example.com")
    assert (fetch.decision, fetch.rule) == ("deny", "WebFetch(example.com)")
    assert settings.check_tool("Read", path="a.txt").decision == "none"  # other tools untouched
    err = capsys.readouterr().err
    assert "deny rule Bash(rm -rf is not `Tool` or `Tool(specifier)`" in err
    assert "every Bash call is denied until it is fixed" in err


def test_malformed_ask_asks_and_malformed_allow_allows_nothing(settings, capsys):
    settings.write("project", ask=["Read()"], allow=["Bash(", 42, "Bash(ls)"])
    assert settings.check_tool("Read", path="README.md").decision == "ask"
    assert settings.check_command("ls").decision == "allow"  # the good rule still works
    assert settings.check_command("pwd").decision == "none"
    err = capsys.readouterr().err
    assert "ask rule Read() has an empty specifier" in err
    assert "allow rule 42 is not a string, so it allows nothing" in err


def test_unknown_tools_and_unparsable_urls(settings):
    settings.write("project", deny=["mcp__github__delete_repo"], allow=["Task(*)"])
    assert settings.check_tool("mcp__github__delete_repo").decision == "deny"
    assert settings.check_tool("Task").decision == "allow"
    bad = settings.check_tool("WebFetch", url="http://[::1")
    assert bad.decision == "deny" and "does not parse" in bad.reason
    with pytest.raises(ValueError, match="needs the path"):
        settings.check_tool("Read")
    with pytest.raises(ValueError, match="needs the URL"):
        settings.check_tool("WebFetch", url=" ")
