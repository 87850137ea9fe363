"""`capy setup` edits only its own keys: the rest of a user's JSON stays byte for byte.

Real-world settings files with their own quirks (tabs, four spaces, CRLF, no final newline,
escaped and unescaped unicode, `"key" : value` spacing, inline objects, trailing commas in
JSONC) go through a real setup and undo; what setup adds may only add lines (and a comma on the
line before), and undo gives back the original bytes.
"""

from __future__ import annotations

import json

import pytest

from capy.setup.documents import parse_json

SETTINGS = ".claude/settings.json"

ODD_SETTINGS = {
    "tabs": (
        '{\n\t"permissions": {\n\t\t"deny": ["Bash(rm -rf:*)"]\n\t},\n'
        '\t"hooks": {\n\t\t"Notification": [\n\t\t\t{"hooks": [{"type": "command", '
        '"command": "notify-send \\u00e9t\\u00e9"}]}\n\t\t]\n\t}\n}\n'
    ),
    "four-spaces-no-final-newline": (
        '{\n    "model": "opus",\n    "env": {"LANG": "fr_FR.UTF-8", "HI": "héllo wörld ✓"}\n}'
    ),
    "crlf": '{\r\n  "statusLine": {"type": "command", "command": "~/st"},\r\n  "z": 1\r\n}\r\n',
    "spaced-colons-and-inline": '{ "includeCoAuthoredBy" : false , "env" : { "A" : "1" } }\n',
    "keys-out-of-order": (
        '{\n  "zeta": true,\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n'
        '          {"type": "command", "command": "./stop.sh", "timeout": 30}\n        ]\n'
        '      }\n    ]\n  },\n  "alpha": [1, 2,\n    3]\n}\n'
    ),
    "empty-object": "{}",
}


def _only_additions(before: str, after: str) -> bool:
    """Every character of `before` is still in `after`, in order: setup only inserted text."""
    remaining = iter(after)
    return all(char in remaining for char in before)


@pytest.mark.parametrize("name", sorted(ODD_SETTINGS))
def test_setup_and_undo_keep_the_users_bytes(name, workspace, run_shared_setup) -> None:
    original = ODD_SETTINGS[name]
    path = workspace.project / SETTINGS
    path.parent.mkdir(parents=True)
    path.write_bytes(original.encode("utf-8"))
    code, _, err = run_shared_setup("--platform", "claude-code")
    assert (code, err) == (0, "")
    after = path.read_bytes().decode("utf-8")
    document = parse_json(after, SETTINGS)
    for key, value in json.loads(original).items():
        if key != "hooks":
            assert document[key] == value, key  # the user's values, unchanged
    assert any(
        "capy hook --platform claude-code" in json.dumps(groups)
        for groups in document["hooks"].values()
    )
    assert _only_additions(original, after), after
    assert ("\r\n" in after) == ("\r\n" in original)
    assert run_shared_setup("--platform", "claude-code")[1].startswith("nothing to change")
    code, _, _ = run_shared_setup("--platform", "claude-code", "--undo")
    assert code == 0
    if original.strip() == "{}":
        assert not path.exists() or path.read_bytes() == original.encode()
    else:
        assert path.read_bytes() == original.encode("utf-8")


def test_a_jsonc_file_keeps_its_trailing_commas(workspace, run_shared_setup) -> None:
    original = '{\n  "servers": {\n    "fs": {"command": "fs-mcp"},\n  },\n  "inputs": [],\n}\n'
    workspace.write(".vscode/mcp.json", original)
    assert run_shared_setup("--platform", "vscode")[0] == 0
    after = (workspace.project / ".vscode/mcp.json").read_text()
    assert after.startswith('{\n  "servers": {\n    "fs": {"command": "fs-mcp"},\n    "capy": {')
    assert after.endswith('  },\n  "inputs": [],\n}\n')
    assert run_shared_setup("--platform", "vscode", "--undo")[0] == 0
    assert (workspace.project / ".vscode/mcp.json").read_text() == original


def test_claude_json_changes_only_this_projects_servers(workspace, run_setup) -> None:
    """~/.claude.json is Claude Code's own big state file: the local MCP scope lives under
    projects.<path>.mcpServers, and nothing else in it may move."""
    other = "/home/someone/wörk/other.project"
    state = (
        '{\n  "numStartups": 412,\n  "tipsHistory": {"memory-command": 3},\n  "projects": {\n'
        f'    "{other}": {{\n      "allowedTools": [],\n      "mcpServers": {{}},\n'
        '      "history": [{"display": "fix the \\"quoted\\" test — ünïcode"}]\n    },\n'
        f'    "{workspace.project}": {{\n      "allowedTools": ["Bash(ls)"],\n'
        '      "hasTrustDialogAccepted": true\n    }\n  },\n  "userID": "abc"\n}\n'
    )
    path = workspace.write("~/.claude.json", state)
    code, out, err = run_setup("--platform", "claude-code", "--command", "capy")
    assert (code, err) == (0, ""), out
    document = json.loads(path.read_text())
    project = document["projects"][str(workspace.project)]
    assert project["mcpServers"]["capy"] == {"command": "capy", "args": ["serve"]}
    assert project["allowedTools"] == ["Bash(ls)"]
    assert document["projects"][other]["mcpServers"] == {}
    assert _only_additions(state, path.read_text())
    assert run_setup("--platform", "claude-code", "--command", "capy", "--undo")[0] == 0
    assert path.read_text() == state


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"hooks": {}, "hooks": {"Stop": []}}\n', "a key given twice"),
        ('{"a": 1} {"b": 2}\n', "two documents in one file"),
    ],
)
def test_json_capy_cannot_follow_is_refused_not_reformatted(
    text, why, workspace, run_shared_setup
) -> None:
    path = workspace.write(SETTINGS, text)
    code, _, err = run_shared_setup("--platform", "claude-code")
    assert code == 2, why
    assert err.count("\n") >= 1 and "Nothing was written" in err
    assert "Traceback" not in err
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--command", "'unclosed"), "cannot be split into words"),
        (("--command", "  "), "--command is empty"),
        (("--shared", "--global"), "choose one of --shared"),
        (("--all", "--mcp-hooks"), "--mcp-hooks is for one platform"),
    ],
)
def test_bad_options_are_one_clear_line(args, message, workspace, run_setup) -> None:
    code, _, err = run_setup(*args)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert workspace.files() == {}
