"""Structured content over a real stdio session: the tools a client may script declare an
`outputSchema`, every successful reply carries `structuredContent` valid against it beside the
text the agent reads, and structured content is redacted like the text."""

from __future__ import annotations

import json

import jsonschema
import pytest
from server_helpers import STRUCTURED_TOOLS as STRUCTURED
from server_helpers import capy_session, import_vault, text_of

from tests.planted_secrets import fresh_secrets, planted_text, raw_in

pytestmark = pytest.mark.anyio

LONG_LOG = (
    "for i in range(3000):\n"
    "    print(f'worker {i} finished batch in {i % 97} ms')\n"
    "print('FATAL: disk quota exceeded on /var/lib/app (errno 122)')\n"
)


def checked(result, schema: dict) -> dict:
    """The result's structured content, after checking it against the declared schema and that
    the text content still says something (the spec: serialized content beside it)."""
    assert not result.is_error, text_of(result)
    assert text_of(result).strip()
    data = result.structured_content
    assert data is not None
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)
    return data


async def test_scriptable_tools_declare_valid_output_schemas(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        listed = await client.list_tools()
    schemas = {tool.name: tool.output_schema for tool in listed.tools if tool.output_schema}
    assert set(schemas) == STRUCTURED
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name


async def test_every_structured_reply_matches_its_schema(project_dir, server_home, tmp_path):
    (project_dir / "data.csv").write_text("city,temp\n" + "".join(f"c{i},{i}\n" for i in range(50)))
    async with capy_session(
        project_dir, server_home, CAPY_VAULT_PATH=str(tmp_path / "vault.db")
    ) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        short = await client.call_tool(
            "capy_execute", {"language": "sh", "code": "echo hi; exit 3"}
        )
        long = await client.call_tool(
            "capy_execute", {"language": "python", "code": LONG_LOG, "intent": "fatal disk error"}
        )
        run_file = await client.call_tool(
            "capy_execute_file",
            {"path": "data.csv", "language": "python", "code": "print(len(FILE_CONTENT))"},
        )
        await client.call_tool(
            "capy_index", {"content": "# Release\n\nTag with `git tag v2`.", "source": "rel"}
        )
        found = await client.call_tool("capy_search", {"queries": ["git tag", "zeppelin"]})
        label = long.structured_content["source"]
        by_label = await client.call_tool(
            "capy_search",
            {"queries": ["disk quota"], "source": label, "include_kinds": ["ephemeral"]},
        )
        vault = await client.call_tool("capy_vault_search", {"queries": ["migration"]})
        stats = await client.call_tool("capy_stats", {})
        doctor = await client.call_tool("capy_doctor", {})

    facts = checked(short, schemas["capy_execute"])
    assert (facts["exit_code"], facts["outcome"], facts["source"]) == (3, "exited", None)
    assert facts["status"].startswith("shell: exit 3") and facts["network"] == "on"
    indexed = checked(long, schemas["capy_execute"])
    assert indexed["exit_code"] == 0 and indexed["source"].startswith("execute:python:")
    assert checked(run_file, schemas["capy_execute_file"])["exit_code"] == 0

    search = checked(found, schemas["capy_search"])
    assert [item["query"] for item in search["results"]] == ["git tag", "zeppelin"]
    best = search["results"][0]["hits"][0]
    assert (best["rank"], best["source"], best["kind"]) == (1, "rel", "durable")
    assert "git tag v2" in best["snippet"] and search["results"][1]["hits"] == []
    # The label an indexed run gives is one capy_search takes.
    hits = checked(by_label, schemas["capy_search"])["results"][0]["hits"]
    assert hits and "disk quota" in hits[0]["snippet"]

    assert checked(vault, schemas["capy_vault_search"]) == {
        "vault": False,
        "results": [],
        "left_out": 0,
    }
    report = checked(stats, schemas["capy_stats"])
    assert report["session"]["tools"]["capy_execute"]["calls"] == 2
    health = checked(doctor, schemas["capy_doctor"])
    assert health["checks"] and health["summary"]["ok"] >= 1
    assert health["ok"] is (health["summary"]["fail"] == 0)


async def test_vault_hits_are_structured_too(project_dir, server_home, shared_testdata, tmp_path):
    vault = str(tmp_path / "vault.db")
    import_vault(project_dir, server_home, vault, shared_testdata("claude-transcripts"))
    async with capy_session(project_dir, server_home, CAPY_VAULT_PATH=vault) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        found = await client.call_tool("capy_vault_search", {"queries": ["test"], "limit": 2})
    data = checked(found, schemas["capy_vault_search"])
    hits = data["results"][0]["hits"]
    assert data["vault"] is True and 1 <= len(hits) <= 2
    assert hits[0]["session"] in text_of(found) and hits[0]["role"]


async def test_structured_content_never_holds_a_planted_secret(project_dir, server_home):
    found = fresh_secrets()
    (project_dir / "leaky.env").write_text(planted_text(found) + "\n", encoding="utf-8")
    printer = {"language": "sh", "code": "cat leaky.env"}
    async with capy_session(project_dir, server_home) as client:
        replies = {
            "execute": await client.call_tool("capy_execute", printer),
            "execute-file": await client.call_tool(
                "capy_execute_file",
                {"path": "leaky.env", "language": "sh", "code": 'cat "$FILE_CONTENT_PATH"'},
            ),
            "index": await client.call_tool(
                "capy_index", {"content": planted_text(found), "source": "leaky notes"}
            ),
            "search": await client.call_tool(
                "capy_search", {"queries": ["aws github slack stripe discord password"]}
            ),
        }
    for name, result in replies.items():
        if name == "index":
            continue
        structured = json.dumps(result.structured_content)
        assert result.structured_content is not None, name
        assert raw_in(structured, found) == [], name
    snippets = json.dumps(replies["search"].structured_content)
    assert "[REDACTED:secrets." in snippets  # the secrets were found, and masked
