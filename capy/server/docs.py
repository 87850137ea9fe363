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
    return "\n".join(parts).rstrip() + "\n"


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
    return "\n".join(lines) + "\n"


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
    return str(schema.get("type", "any"))


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_tools_markdown())
