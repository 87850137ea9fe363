"""capy's MCP server over stdio: the capy_* tools on top of `capy.api`."""
