"""The MCP server over real stdio: initialize, list the tools, call each one, and its errors."""

from __future__ import annotations

import json

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

TOOLS = {
    "capy_execute",
    "capy_execute_file",
    "capy_batch_execute",
    "capy_index",
    "capy_search",
    "capy_fetch_and_index",
    "capy_stats",
    "capy_doctor",
    "capy_cleanup",
    "capy_vault_search",
    "capy_remember",
    "capy_recall",
    "capy_memory_search",
    "capy_memory_add",
    "capy_memory_feedback",
}


async def test_lists_every_tool_with_schema_and_annotations(project_dir, server_home, snapshot):
    async with capy_session(project_dir, server_home) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 150, tool.name
        assert tool.annotations is not None, tool.name
        assert tool.input_schema["type"] == "object"
    assert tools["capy_search"].annotations.read_only_hint is True
    assert tools["capy_execute"].annotations.destructive_hint is True
    assert tools["capy_execute"].input_schema["required"] == ["language", "code"]
    # The tool contract (names, parameters, annotations) is what agents are built against.
    contract = {
        name: {
            "annotations": tool.annotations.model_dump(exclude_none=True),
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
        }
        for name, tool in sorted(tools.items())
    }
    assert json.loads(json.dumps(contract)) == snapshot


async def test_the_hook_tool_is_listed_only_to_a_server_started_for_hooks(project_dir, server_home):
    """capy_hook is for a host running hooks as tool calls; every other agent would pay for it
    in its context on every session, so plain `capy serve` does not list it."""
    async with capy_session(project_dir, server_home) as client:
        plain = await client.list_tools()
    async with capy_session(project_dir, server_home, serve_args=("--mcp-hooks",)) as client:
        hooked = await client.list_tools()
    assert "capy_hook" not in {tool.name for tool in plain.tools}
    assert {tool.name for tool in hooked.tools} == TOOLS | {"capy_hook"}
    for listed in (plain, hooked):
        text = json.dumps(listed.model_dump(mode="json", by_alias=True))
        assert "${" not in text  # no unfilled template placeholders shown to a model


async def test_execute_short_and_long_output(project_dir, server_home):
    code = (
        "for i in range(4000):\n"
        "    print(f'worker {i} finished batch in {i % 97} ms')\n"
        "print('FATAL: disk quota exceeded on /var/lib/app (errno 122)')\n"
    )
    async with capy_session(project_dir, server_home) as client:
        short = await client.call_tool("capy_execute", {"language": "sh", "code": "echo hello"})
        long = await client.call_tool(
            "capy_execute",
            {"language": "python", "code": code, "intent": "fatal disk error"},
        )
        plain = await client.call_tool("capy_execute", {"language": "python", "code": code})
    assert not short.is_error and "hello" in text_of(short) and "exit 0" in text_of(short)
    answer = text_of(long)
    assert "disk quota exceeded" in answer
    # Indexed and searched instead of returned: far smaller than the output itself.
    assert len(answer) < 160_000 // 10
    assert "capy_search" in answer
    # Without an intent long output is indexed; its errors and its end still come back.
    assert "FATAL: disk quota exceeded" in text_of(plain)


async def test_execute_file_reads_the_file_server_side(project_dir, server_home):
    (project_dir / "data.csv").write_text(
        "city,temp\n" + "".join(f"c{i},{i}\n" for i in range(500))
    )
    code = (
        "rows = FILE_CONTENT.splitlines()[1:]\n"
        "print(len(rows), max(int(r.split(',')[1]) for r in rows))"
    )
    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_execute_file", {"path": "data.csv", "language": "python", "code": code}
        )
    text = text_of(result)
    assert not result.is_error, text
    assert "500 499" in text
    assert "c250" not in text  # the file itself never comes back


async def test_read_deny_rule_refuses_execute_file_and_index(project_dir, server_home):
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secrets/**)"]}})
    )
    (project_dir / "secrets").mkdir()
    (project_dir / "secrets" / "prod.env").write_text("API_TOKEN=abc\n")
    async with capy_session(project_dir, server_home) as client:
        run = await client.call_tool(
            "capy_execute_file",
            {"path": "secrets/prod.env", "language": "python", "code": "print(FILE_CONTENT)"},
        )
        index = await client.call_tool("capy_index", {"path": "secrets/prod.env"})
    for result in (run, index):
        assert result.is_error
        assert "Read(./secrets/**)" in text_of(result)
        assert "abc" not in text_of(result)


async def test_denied_command_is_refused_with_the_rule(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_execute", {"language": "shell", "code": "echo ok && rm -rf /"}
        )
    assert result.is_error
    assert "rm -rf /" in text_of(result)


async def test_batch_index_search_cleanup_stats(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        batch = await client.call_tool(
            "capy_batch_execute",
            {
                "commands": [
                    {"label": "numbers", "command": "seq 1 2000"},
                    {"label": "greeting", "command": "echo the launch code word is marmalade"},
                ],
                "queries": ["launch code word"],
            },
        )
        indexed = await client.call_tool(
            "capy_index",
            {"content": "# Release\n\nTag with `git tag v2` after the changelog.", "source": "rel"},
        )
        found = await client.call_tool("capy_search", {"queries": ["changelog tag"]})
        missing = await client.call_tool("capy_search", {"queries": ["zeppelin quasar"]})
        cleanup = await client.call_tool("capy_cleanup", {})
        stats = await client.call_tool("capy_stats", {})
    assert "marmalade" in text_of(batch)
    assert not indexed.is_error and "rel" in text_of(indexed)
    assert "git tag v2" in text_of(found)
    # The batch's output is this session's own, searched by default: no kind was left out.
    assert "include_kinds" not in text_of(missing) and "No matches" in text_of(missing)
    assert not cleanup.is_error
    report = text_of(stats)
    for tool in ("capy_batch_execute", "capy_index", "capy_search", "capy_cleanup"):
        assert tool in report


async def test_bad_arguments_are_tool_errors_and_the_server_survives(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        unknown = await client.call_tool("capy_execute", {"language": "cobol", "code": "x"})
        empty = await client.call_tool("capy_execute", {"language": "python", "code": "  "})
        missing = await client.call_tool("capy_execute", {"language": "python"})
        neither = await client.call_tool("capy_index", {})
        no_query = await client.call_tool("capy_search", {"queries": []})
        after = await client.call_tool("capy_execute", {"language": "sh", "code": "echo alive"})
    assert unknown.is_error and "cobol" in text_of(unknown)
    assert empty.is_error and "empty" in text_of(empty)
    assert missing.is_error
    assert neither.is_error and "one of content, path or paths" in text_of(neither)
    assert no_query.is_error
    assert "alive" in text_of(after)


async def test_search_throttle_steers_to_batching(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        results = [
            await client.call_tool("capy_search", {"queries": [f"query {n}"]}) for n in range(9)
        ]
    assert not results[0].is_error
    assert "limited to 1" in text_of(results[3])
    assert results[8].is_error and "Batch" in text_of(results[8])


async def test_stats_cli_shows_the_sessions_report(project_dir, server_home):
    import subprocess
    import sys

    from server_helpers import server_env

    async with capy_session(project_dir, server_home) as client:
        await client.call_tool("capy_execute", {"language": "sh", "code": "seq 1 50000"})
    completed = subprocess.run(
        [sys.executable, "-m", "capy", "stats", "--json"],
        cwd=project_dir,
        env={**server_env(server_home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    tools = report["session"]["tools"]
    assert tools["capy_execute"]["calls"] == 1
    assert tools["capy_execute"]["processed_bytes"] > 200_000


async def test_batch_reports_progress_when_asked(project_dir, server_home):
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    commands = [{"label": f"step{n}", "command": f"echo step {n}"} for n in range(3)]
    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_batch_execute",
            {"commands": commands, "queries": ["step"]},
            progress_callback=on_progress,
        )
    assert not result.is_error, text_of(result)
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]


async def test_hook_tool_answers_like_the_hook_command(project_dir, server_home):
    """The mcp_tool hook path gives the very answer `capy hook` gives for the same payload."""
    import subprocess
    import sys

    from server_helpers import server_env

    fields = {
        "event": "PreToolUse",
        "session_id": "s-1",
        "cwd": str(project_dir),
        "tool_name": "WebFetch",
        "url": "https://github.com/example/capy/issues/7",
        "prompt": "summarise the issue",
    }
    async with capy_session(project_dir, server_home, serve_args=("--mcp-hooks",)) as client:
        result = await client.call_tool("capy_hook", fields)
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s-1",
        "cwd": str(project_dir),
        "tool_name": "WebFetch",
        "tool_input": {"url": fields["url"], "prompt": fields["prompt"]},
    }
    command = subprocess.run(
        [sys.executable, "-m", "capy", "hook", "PreToolUse"],
        input=json.dumps(payload),
        cwd=project_dir,
        env={**server_env(server_home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not result.is_error
    answer = json.loads(text_of(result))
    assert answer == json.loads(command.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "gh issue view" in answer["hookSpecificOutput"]["permissionDecisionReason"]


async def test_vault_search_before_and_after_an_import(
    project_dir, server_home, shared_testdata, tmp_path
):
    from server_helpers import import_vault

    transcripts = shared_testdata("claude-transcripts")
    vault = str(tmp_path / "vault.db")
    async with capy_session(project_dir, server_home, CAPY_VAULT_PATH=vault) as client:
        empty = await client.call_tool("capy_vault_search", {"queries": ["migration"]})
    assert not empty.is_error
    assert "capy vault import" in text_of(empty)
    import_vault(project_dir, server_home, vault, transcripts)
    async with capy_session(project_dir, server_home, CAPY_VAULT_PATH=vault) as client:
        found = await client.call_tool("capy_vault_search", {"queries": ["test", "edit"]})
        await client.call_tool(
            "capy_index",
            {"content": "# Testing\n\nRun the test suite with just test.", "source": "n"},
        )
        both = await client.call_tool(
            "capy_search", {"queries": ["test"], "include_vault": True, "limit": 4}
        )
    # One ranking from two corpora: the project's knowledge and the archived sessions.
    assert "**1. n" in text_of(both) or "**2. n" in text_of(both), text_of(both)
    assert "vault › " in text_of(both)
    assert not found.is_error, text_of(found)
    assert text_of(found).count("## ") >= 2
    assert "capy vault import" not in text_of(found)
