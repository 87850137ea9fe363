"""Bad inputs over MCP: wrong types to every tool, and device files or FIFOs as paths.

Each call goes to a real `capy serve` through the official SDK client under a deadline; a call
past it is a hang, and a broken session (the server died or answered garbage) is reported in
the reply text the inputs family judges.
"""

from __future__ import annotations

from capy.bench.hostile_common import Outcome, Scratch, mcp_session, reply_text


def wrong_value(schema: dict) -> object:
    """A value of a type the schema does not take."""
    types = _types(schema)
    if "string" not in types:
        return "not-a-" + (sorted(types)[0] if types else "thing")
    if "integer" not in types and "number" not in types:
        return 12345
    return {"unexpected": ["shape"]}


def _types(schema: dict) -> set[str]:
    found: set[str] = set()
    if "type" in schema:
        kind = schema["type"]
        found.update(kind if isinstance(kind, list) else [kind])
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key, []):
            found |= _types(option)
    return found


async def mcp_wrong_types(
    scratch: Scratch, deadline: float, only: frozenset[str] | None = None
) -> list[tuple[str, Outcome]]:
    import anyio

    results: list[tuple[str, Outcome]] = []
    async with mcp_session(scratch) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            if only is not None and tool.name not in only:
                continue
            properties = tool.input_schema.get("properties", {})
            calls = [("no arguments", {}), ("an unknown argument", {"hostile": [1, {"x": None}]})]
            calls += [
                (f"{name} of a wrong type", {name: wrong_value(spec)})
                for name, spec in properties.items()
            ]
            for label, arguments in calls:
                results.append(
                    (
                        f"{tool.name}: {label}",
                        await _timed_call(client, tool.name, arguments, deadline),
                    )
                )
        await anyio.sleep(0)
    return results


MCP_PATHS = (("/dev/zero", "/dev/zero"), ("a FIFO", None))  # None: this run's FIFO


async def mcp_path(scratch: Scratch, path: str, deadline: float) -> Outcome:
    """capy_index {path} in a server of its own (a hang may leave that server stuck)."""
    async with mcp_session(scratch) as client:
        return await _timed_call(client, "capy_index", {"path": path}, deadline)


async def _timed_call(client, tool: str, arguments: dict, deadline: float) -> Outcome:
    import time

    import anyio

    start = time.perf_counter()
    try:
        with anyio.fail_after(deadline):
            result = await client.call_tool(tool, arguments)
        text, hung = reply_text(result), False
    except TimeoutError:
        text, hung = "", True
    except Exception as error:  # the session broke: the server died or answered garbage
        text, hung = f"{type(error).__name__}: {error}", False
    return Outcome(text, "", None, hung, time.perf_counter() - start)
