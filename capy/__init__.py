"""capy: a context-saving sandbox and persistent memory for AI coding agents."""

__version__ = "0.1.0"

# The name on the package index (`capy` there is an unrelated project); the command and the
# import name stay `capy`.
DISTRIBUTION = "capy-mcp"
