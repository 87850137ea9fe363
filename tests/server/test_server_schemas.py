"""The tools' input schemas state the bounds their own words state, and both match the packs.

A description that says "at most 20" or "1 to 8" promises a bound a client can check before it
calls; a schema without it lets a model send 50 and learn the rule only from an error.
"""

from __future__ import annotations

import re

import anyio
import pytest

from capy.api.workspace import Workspace
from capy.rules import build_ruleset
from capy.server import fields
from capy.server.app import build_server

# "at most 20", "up to 20", "1 to 8": an upper bound (and a lower one); "default 3" is checked
# against the packs below.
UPPER = re.compile(r"\b(?:at most|up to|no more than)\s+(\d+)|\b\d+\s+to\s+(\d+)")
LOWER = re.compile(r"\b(\d+)\s+to\s+\d+|\bat least\s+(\d+)")


def _tools():
    return anyio.run(build_server(Workspace(), mcp_hooks=True).list_tools)


def _constraints(schema: dict) -> tuple[set[float], set[float]]:
    """The upper and lower bounds a property's schema states, through anyOf (optional ones)."""
    upper, lower = set(), set()
    for option in [schema, *schema.get("anyOf", [])]:
        upper |= {
            option[key] for key in ("maximum", "exclusiveMaximum", "maxItems") if key in option
        }
        lower |= {option[key] for key in ("minimum", "minItems") if key in option}
        if "exclusiveMinimum" in option:
            lower.add(option["exclusiveMinimum"])
    return upper, lower


def _numbers(pattern: re.Pattern, text: str) -> set[float]:
    return {float(group) for match in pattern.finditer(text) for group in match.groups() if group}


@pytest.mark.parametrize("tool", _tools(), ids=lambda tool: tool.name)
def test_every_bound_a_description_names_is_in_the_schema(tool):
    properties = tool.input_schema.get("properties", {})
    for name, schema in properties.items():
        text = schema.get("description", "")
        upper, lower = _constraints(schema)
        assert _numbers(UPPER, text) <= upper, (tool.name, name, text, schema)
        assert _numbers(LOWER, text) <= lower | {0.0}, (tool.name, name, text, schema)
    # A bound named in the tool's own description belongs to one of its parameters.
    named = _numbers(UPPER, tool.description)
    stated = set().union(*(_constraints(schema)[0] for schema in properties.values()))
    assert named <= stated, (tool.name, named, stated)


def test_the_stated_bounds_are_the_shipped_packs_values():
    rules = build_ruleset()
    search = rules.view("search").limits
    executor = rules.view("executor").limits
    fetch = rules.view("security").fetch.concurrency
    assert (
        search.max_queries_per_call,
        search.default_results,
        search.max_results,
    ) == (fields.MAX_QUERIES, fields.DEFAULT_RESULTS, fields.MAX_RESULTS)
    assert (
        executor.timeout.default_seconds,
        executor.timeout.max_seconds,
    ) == (fields.DEFAULT_TIMEOUT_S, fields.MAX_TIMEOUT_S)
    assert (
        executor.batch.default_concurrency,
        executor.batch.max_concurrency,
    ) == (fields.DEFAULT_BATCH_CONCURRENCY, fields.MAX_BATCH_CONCURRENCY)
    assert (
        fetch.default,
        fetch.max,
    ) == (fields.DEFAULT_FETCH_CONCURRENCY, fields.MAX_FETCH_CONCURRENCY)


def test_the_search_limit_is_bounded_as_its_text_says():
    tools = {tool.name: tool for tool in _tools()}
    for name in ("capy_search", "capy_vault_search"):
        schema = tools[name].input_schema["properties"]
        assert _constraints(schema["limit"]) == ({fields.MAX_RESULTS}, {1})
        assert schema["queries"]["maxItems"] == fields.MAX_QUERIES


@pytest.mark.anyio
async def test_arguments_out_of_bounds_get_one_sentence_without_their_values(
    project_dir, server_home
):
    from server_helpers import capy_session, text_of

    from tests.planted_secrets import random_token

    token = "ghp_" + random_token(36)
    async with capy_session(project_dir, server_home) as client:
        limit = await client.call_tool("capy_search", {"queries": ["a"], "limit": 50})
        many = await client.call_tool("capy_search", {"queries": [token] * 11})
        bad = await client.call_tool(
            "capy_execute", {"language": "sh", "code": "true", "timeout": token, "network": "x"}
        )
    assert limit.is_error and text_of(limit) == (
        "capy_search got invalid arguments: `limit`: Input should be less than or equal to 20. "
        "Its input schema (tools/list) says what each parameter takes."
    )
    assert many.is_error and "`queries`: List should have at most 10 items" in text_of(many)
    assert bad.is_error and "`timeout`" in text_of(bad) and "`network`" in text_of(bad)
    for result in (limit, many, bad):
        assert token not in text_of(result) and "\n" not in text_of(result)
        assert "pydantic" not in text_of(result)
