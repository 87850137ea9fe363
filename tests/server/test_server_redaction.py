"""No tool hands the agent a secret: fresh fake secrets planted in every tool's output, over a
real `capy serve` stdio session, come back redacted; terminal controls come back visible.

Every reply leaves through one chokepoint (`capy.server.calls.run_tool`), text and structured
content alike; these tests plant secrets of several detector kinds where each tool finds them:
program output, a file, a batch, a URL, a source label, an index path, an error message.
"""

from __future__ import annotations

import json
import secrets
from http.server import BaseHTTPRequestHandler

import pytest

from tests.loopback_helpers import serve_loopback
from tests.planted_secrets import (
    KEY_CUTS,
    fake_private_key,
    fresh_secrets,
    key_body_lines,
    log_cut_inside_key,
    planted_text,
    random_token,
    raw_in,
)
from tests.server.server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio


def everything_in(result) -> str:
    """Text content and structured content of a tool result, as the client received them."""
    structured = result.structured_content
    return text_of(result) + "\n" + (json.dumps(structured) if structured else "")


def test_the_planted_secrets_are_each_found_by_the_pack() -> None:
    """The test's own premise: every planted kind is one the shipped pack detects."""
    from capy.rules import build_ruleset

    pack = build_ruleset().view("secrets")
    for kind, value in fresh_secrets().items():
        text = f'db_password = "{value}"' if kind == "password" else value
        assert pack.find_secrets(text), kind


async def test_no_tool_returns_a_planted_secret(project_dir, server_home, tmp_path):
    found = fresh_secrets()
    planted = planted_text(found)
    (project_dir / "leaky.env").write_text(planted + "\n", encoding="utf-8")
    script = project_dir / "print_secrets.sh"
    script.write_text(f"cat <<'EOF'\n{planted}\nEOF\n", encoding="utf-8")
    token = found["github"]

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"<html><body><h1>Deploy notes</h1><pre>{planted}</pre></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    replies: dict[str, str] = {}
    db_dir = tmp_path / f"db-{found['aws']}"  # a path the stats report shows
    with serve_loopback("127.0.0.1", Page) as port:
        async with capy_session(
            project_dir,
            server_home,
            CAPY_FETCH__ALLOW_HOSTS="127.0.0.1",
            CAPY_DB_PATH=str(db_dir / "knowledge.db"),
        ) as client:
            calls = {
                "execute": ("capy_execute", {"language": "sh", "code": "sh print_secrets.sh"}),
                "execute-intent": (
                    "capy_execute",
                    {
                        "language": "sh",
                        "code": "seq 1 40000; sh print_secrets.sh; seq 1 40000",
                        "intent": "stripe discord aws github token password key",
                    },
                ),
                "execute-file": (
                    "capy_execute_file",
                    {"path": "leaky.env", "language": "python", "code": "print(FILE_CONTENT)"},
                ),
                "batch": (
                    "capy_batch_execute",
                    {
                        "commands": [{"label": f"run {token}", "command": "sh print_secrets.sh"}],
                        "queries": ["aws github slack jwt stripe discord password"],
                    },
                ),
                "index": (
                    "capy_index",
                    {"content": planted, "source": f"notes {token}"},
                ),
                "search": (
                    "capy_search",
                    {"queries": ["aws github slack stripe discord password", "notes"]},
                ),
                "search-by-label": (
                    "capy_search",
                    {"queries": ["password"], "source": f"notes {token}"},
                ),
                "fetch": (
                    "capy_fetch_and_index",
                    {"url": f"http://127.0.0.1:{port}/notes?access_token={token}"},
                ),
                "error": (
                    "capy_execute_file",
                    {"path": f"missing/{found['stripe']}.txt", "language": "sh", "code": "true"},
                ),
                "stats": ("capy_stats", {}),
            }
            for name, (tool, arguments) in calls.items():
                replies[name] = everything_in(await client.call_tool(tool, arguments))

    leaks = {name: raw_in(reply, found) for name, reply in replies.items()}
    assert not {name: kinds for name, kinds in leaks.items() if kinds}, leaks
    # The replies are real answers, not withheld or empty ones.
    assert "[REDACTED:secrets.github-pat]" in replies["execute"]
    assert "[REDACTED:secrets.github-pat]" in replies["search-by-label"]  # the label matched
    assert "Deploy notes" in replies["fetch"]


async def test_capy_keys_do_not_reach_the_agent(project_dir, server_home):
    db_key, vault_key = secrets.token_hex(32), random_token(40)
    async with capy_session(
        project_dir, server_home, CAPY_DB_KEY=db_key, CAPY_VAULT_KEY=vault_key
    ) as client:
        env = text_of(await client.call_tool("capy_execute", {"language": "sh", "code": "env"}))
        printed = text_of(
            await client.call_tool(
                "capy_execute",
                {"language": "sh", "code": "printenv CAPY_DB_KEY CAPY_VAULT_KEY; echo end"},
            )
        )
    assert "CAPY_SANDBOX_ID=" in env and "CAPY_DB_KEY" not in env and "CAPY_VAULT_KEY" not in env
    assert db_key not in env + printed and vault_key not in env + printed
    assert "end" in printed


async def test_terminal_controls_in_output_come_back_visible(project_dir, server_home):
    code = r"printf 'a\033]52;c;aGk=\007b \033[2J c\233d \342\200\256e\rf\n'"
    async with capy_session(project_dir, server_home) as client:
        reply = text_of(await client.call_tool("capy_execute", {"language": "sh", "code": code}))
    for control in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert control not in reply, repr(control)
    assert "a\\u001b]52;c;aGk=\\u0007b" in reply and "\\u202ee" in reply


async def test_the_opt_out_shows_secrets_and_says_so(project_dir, server_home):
    token = "ghp_" + random_token(36)
    async with capy_session(project_dir, server_home, CAPY_REDACTION__REPLIES="false") as client:
        reply = text_of(
            await client.call_tool("capy_execute", {"language": "sh", "code": f"echo {token}"})
        )
    assert token in reply
    assert reply.startswith("_Secrets were NOT redacted here (the setting redaction.replies")


async def test_the_hook_answer_for_the_host_is_passed_on_as_is(project_dir, server_home):
    """capy_hook answers the host with hook JSON, exactly what `capy hook` prints: a rewritten
    command in it must run as the agent wrote it, so it is not redacted."""
    token = "ghp_" + random_token(36)
    command = f'curl -s -H "Authorization: Bearer {token}" https://api.example.com/user'
    async with capy_session(project_dir, server_home, serve_args=("--mcp-hooks",)) as client:
        result = await client.call_tool(
            "capy_hook", {"event": "PreToolUse", "tool_name": "Bash", "command": command}
        )
    answer = json.loads(text_of(result))
    assert token in json.dumps(answer["hookSpecificOutput"]["updatedInput"])


FILE_PRINTER = 'cat "$FILE_CONTENT_PATH"'


async def test_a_middle_cut_inside_a_private_key_leaves_no_key_line(project_dir, server_home):
    """A long log with a key in it, cut where the key is: the part on either side of the cut
    has no BEGIN or no END, so only whole text shows it for a key; none of its lines returns."""
    from capy.rules import build_ruleset

    limits = build_ruleset().view("executor").limits.output
    keys = {}
    for side, place in KEY_CUTS:
        keys[side, place] = key = fake_private_key()
        log = log_cut_inside_key(key, side=side, place=place, limits=limits)
        (project_dir / f"{side}-{place}.log").write_text(log, encoding="utf-8")
    async with capy_session(project_dir, server_home) as client:
        for (side, place), key in keys.items():
            for tool, arguments in (
                ("capy_execute", {"language": "sh", "code": f"cat {side}-{place}.log"}),
                (
                    "capy_execute_file",
                    {"path": f"{side}-{place}.log", "language": "sh", "code": FILE_PRINTER},
                ),
            ):
                reply = everything_in(await client.call_tool(tool, arguments))
                # Long output comes back indexed (head, tail, how to search) or, over a raised
                # threshold, cut in the middle: neither may show a line of the key.
                shown = [line for line in key_body_lines(key) if line in reply]
                assert shown == [], (tool, side, place, len(shown))
