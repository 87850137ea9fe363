"""docs/tools.md, generated from the tools the server registers, so the reference cannot drift.

Regenerate with `python -m capy.server.docs > docs/tools.md` (`just gen` does it); a test fails
when the committed file differs.
"""

from __future__ import annotations

from typing import Any

HEADER = """# capy's MCP tools

<!-- Generated from capy/server/tools.py by `python -m capy.server.docs`; do not edit. -->

`capy serve` runs these tools over stdio. Each is a thin shell over one `capy.api` function,
and most have a CLI twin (`capy execute`, `capy index`, `capy search`, `capy fetch`,
`capy stats`, `capy doctor`, `capy cleanup`). `capy_hook` is listed only by a server started
with `capy serve --mcp-hooks`, which `capy setup --mcp-hooks` registers.

Every tool answers in markdown text, the agent's reading. The tools a client may script also
declare an `outputSchema` and return the same facts as `structuredContent`, listed under
"Structured content" below; both pass the same secret redaction. A client that sends a
progress token hears from `capy_execute` and `capy_execute_file` every second while the code
runs (seconds elapsed, output so far), and from `capy_batch_execute` and
`capy_fetch_and_index` as each command or URL finishes.
"""

CATALOG = """## Resources and prompts

- **Resources**: the knowledge base's sources that a search finds by default (durable and
  session kinds), newest first, as `capy://sources/<id>`: at most {max_sources} (the retention
  pack's `listing.max_sources`). Reading one gives its stored text, redacted. capy sends no
  change notifications, so it advertises neither `subscribe` nor `listChanged`: list again to
  see new sources.
- **Prompt `capy_routing`**: the routing block capy's hooks give an agent at session start
  (which capy tool to use for what), for agents that run without capy's hooks.
"""

_HINTS = {
    "read_only_hint": "read-only",
    "destructive_hint": "destructive",
    "idempotent_hint": "idempotent",
    "open_world_hint": "open world",
}


def render_tools_markdown() -> str:
    import anyio

    from capy.api.workspace import Workspace
    from capy.server.app import build_server

    # With the hook tool, which only `capy serve --mcp-hooks` lists, so the reference has it.
    tools = anyio.run(build_server(Workspace(), mcp_hooks=True).list_tools)
    parts = [HEADER]
    for tool in tools:
        parts.append(_tool_section(tool))
    parts.append(CATALOG.format(max_sources=_shipped_listing_cap()))
    return "\n".join(parts).rstrip() + "\n"


def _shipped_listing_cap() -> int:
    from capy.rules import build_ruleset

    return build_ruleset().view("retention").listing.max_sources


def _tool_section(tool: Any) -> str:
    annotations = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
    hints = ", ".join(
        label if annotations.get(field) else f"not {label}"
        for field, label in _HINTS.items()
        if field in annotations
    )
    lines = [f"## `{tool.name}`: {tool.title}", "", tool.description, "", f"_{hints}_", ""]
    properties = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    if properties:
        lines += ["| parameter | type | required | meaning |", "|---|---|---|---|"]
        for name, schema in properties.items():
            kind = _type_of(schema, tool.input_schema.get("$defs", {}))
            meaning = schema.get("description", "").replace("|", "\\|")
            lines.append(
                f"| `{name}` | {kind} | {'yes' if name in required else 'no'} | {meaning} |"
            )
    else:
        lines.append("No parameters.")
    if tool.output_schema:
        lines += ["", "Structured content:", "", "| field | type | meaning |", "|---|---|---|"]
        defs = tool.output_schema.get("$defs", {})
        for path, schema in _fields(tool.output_schema, defs):
            meaning = schema.get("description", "").replace("|", "\\|")
            lines.append(f"| `{path}` | {_output_type(schema, defs)} | {meaning} |")
    return "\n".join(lines) + "\n"


def _fields(schema: dict[str, Any], defs: dict[str, Any], prefix: str = ""):
    """(dotted path, schema) for every field, nested objects and lists of them flattened:
    `results[].hits[].rank`."""
    for name, field in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path, field
        inner = _object_of(field, defs)
        if inner is not None:
            yield from _fields(inner, defs, path + ("[]." if _is_list(field, defs) else "."))
        values = field.get("additionalProperties")
        if isinstance(values, dict) and _object_of(values, defs) is not None:
            yield from _fields(_object_of(values, defs), defs, path + ".<name>.")


def _object_of(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema a field holds (itself, its items, its non-null option), if any."""
    if "$ref" in schema:
        return _object_of(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        found = [_object_of(option, defs) for option in schema["anyOf"]]
        return next((item for item in found if item is not None), None)
    if schema.get("type") == "array":
        return _object_of(schema.get("items", {}), defs)
    return schema if "properties" in schema else None


def _output_type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    """A structured field's type, saying when it may be null: a script must handle that."""
    if "anyOf" in schema:
        kinds = [_output_type(option, defs) for option in schema["anyOf"]]
        return " or ".join(kinds)
    if "$ref" in schema:
        return "object"
    if schema.get("type") == "array":
        return f"list of {_output_type(schema.get('items', {}), defs)}"
    if isinstance(schema.get("additionalProperties"), dict):
        return f"map of {_output_type(schema['additionalProperties'], defs)}"
    return _type_of(schema, defs)


def _is_list(schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(_is_list(option, defs) for option in schema["anyOf"])
    return schema.get("type") == "array"


def _type_of(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        kinds = [_type_of(option, defs) for option in schema["anyOf"]]
        return " or ".join(kind for kind in kinds if kind != "null")
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    if schema.get("type") == "array":
        return f"list of {_type_of(schema.get('items', {}), defs)}"
    if schema.get("type") == "object" and "additionalProperties" in schema:
        values = schema["additionalProperties"]
        if isinstance(values, dict) and values:
            return f"map of {_type_of(values, defs)}"
    return str(schema.get("type", "any"))


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_tools_markdown())
