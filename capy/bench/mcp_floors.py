"""What the benchmarks that drive capy over MCP share: the bare SDK server they are compared
with, and the overlay that lifts the search throttle for one-query-per-call timing."""

from __future__ import annotations

from pathlib import Path

# The floor for a tool call and for a server start: the same SDK serving one no-op tool.
BARE_SDK_SERVER = (
    "from mcp.server.mcpserver import MCPServer\n"
    "server = MCPServer('bare')\n"
    "@server.tool()\n"
    "def noop() -> str:\n"
    "    return 'ok'\n"
    "server.run()\n"
)
# Far beyond any run here: the throttle stays out of the way of one-query-per-call timing.
UNTHROTTLED_CALLS = 10000
UNTHROTTLED_SEARCH = f"""pack: bench-unthrottled
schema: overlay.v1
version: 1.0.0
description: A benchmark's burst of searches, one query per call, never throttled.
requires: ">=0.1"
extends: search
patch:
  throttle:
    window_seconds: 1
    stages:
      - after_calls: {UNTHROTTLED_CALLS}
        max_results: 0
        message: Search refused by the benchmark overlay.
"""


def lift_search_throttle(config_home: Path) -> None:
    """Write the overlay into the (throw-away) user rules folder under `config_home`."""
    rules = config_home / "capy" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "bench-unthrottled.yaml").write_text(UNTHROTTLED_SEARCH, encoding="utf-8")
