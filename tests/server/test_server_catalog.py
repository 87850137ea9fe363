"""Resources and prompts over a real stdio session: only what exists is advertised; the
knowledge base's sources are listed and read as resources, redacted; the routing block is a
prompt."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError
from server_helpers import capy_session

from tests.planted_secrets import fresh_secrets, planted_text, raw_in

pytestmark = pytest.mark.anyio


async def test_nothing_is_advertised_that_does_not_work(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        capabilities = client.server_capabilities
    advertised = capabilities.model_dump(exclude_none=True)
    assert advertised["resources"].get("subscribe") is not True
    for kind in ("tools", "prompts", "resources"):
        assert advertised[kind].get("list_changed") is not True, kind


async def test_sources_are_resources_and_read_redacted(project_dir, server_home):
    found = fresh_secrets()
    token = found["github"]
    async with capy_session(project_dir, server_home) as client:
        empty = await client.list_resources()
        await client.call_tool(
            "capy_index",
            {"content": f"# Deploy\n\nShip it.\n\n{planted_text(found)}\n", "source": "deploy"},
        )
        await client.call_tool("capy_index", {"content": "plain notes", "source": f"n {token}"})
        # Output indexed for an intent is ephemeral: searched on request, not listed.
        await client.call_tool(
            "capy_execute", {"language": "sh", "code": "seq 1 20000", "intent": "numbers"}
        )
        listed = (await client.list_resources()).resources
        by_name = {resource.name: resource for resource in listed}
        deploy = by_name["deploy"]
        read = await client.read_resource(str(deploy.uri))
        with pytest.raises(MCPError) as missing:
            await client.read_resource("capy://sources/999999")
        with pytest.raises(MCPError) as foreign:
            await client.read_resource("file:///etc/passwd")
    assert empty.resources == []
    assert len(listed) == 2 and listed[0].name != "deploy"  # newest first
    assert all(str(resource.uri).startswith("capy://sources/") for resource in listed)
    assert deploy.mime_type == "text/markdown" and deploy.size and "durable" in deploy.description
    assert token not in " ".join(resource.name for resource in listed)
    assert "[REDACTED:secrets.github-pat]" in " ".join(by_name)
    (content,) = read.contents
    assert content.mime_type == "text/markdown" and "Ship it." in content.text
    assert raw_in(content.text, found) == []
    assert "No source 999999" in str(missing.value)
    assert "not a capy resource" in str(foreign.value)


async def test_the_routing_block_is_a_prompt(project_dir, server_home):
    from capy.rules import build_ruleset

    block = build_ruleset().view("routing").routing_block.text.strip()
    async with capy_session(project_dir, server_home) as client:
        prompts = (await client.list_prompts()).prompts
        got = await client.get_prompt("capy_routing")
    assert [prompt.name for prompt in prompts] == ["capy_routing"]
    assert prompts[0].description and prompts[0].arguments in (None, [])
    (message,) = got.messages
    assert message.role == "user" and message.content.text == block


async def test_the_listing_stops_at_the_packs_cap(project_dir, tmp_path):
    home = tmp_path / "home"
    rules = home / ".config" / "capy" / "rules"
    rules.mkdir(parents=True)
    (rules / "short-list.yaml").write_text(
        "pack: short-list\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Lists two sources at most.\n"
        'requires: ">=0.1"\nextends: retention\npatch:\n  listing:\n    max_sources: 2\n'
    )
    async with capy_session(project_dir, home) as client:
        for number in range(3):
            await client.call_tool(
                "capy_index", {"content": f"note number {number}", "source": f"note-{number}"}
            )
        listed = (await client.list_resources()).resources
        oldest = await client.call_tool("capy_search", {"queries": ["note number 0"]})
    assert [resource.name for resource in listed] == ["note-2", "note-1"]
    assert oldest.structured_content["results"][0]["hits"][0]["source"] == "note-0"
