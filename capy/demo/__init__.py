"""`capy demo`: a short, real session through the MCP server, ending in the savings report."""
