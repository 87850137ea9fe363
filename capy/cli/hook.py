"""`capy hook EVENT`: handle one agent hook event (JSON on stdin, the platform's JSON on stdout).

The console script answers hooks without loading this CLI (see `capy.entry`); this command is
the same path for `python -m capy hook ...` and for anyone calling the cyclopts app.
"""

from __future__ import annotations

from capy.entry import DEFAULT_PLATFORM, run_hook


def hook(event: str, /, *, platform: str = DEFAULT_PLATFORM) -> int:
    """Handle one hook event: read its JSON payload on stdin, answer on stdout.

    Never fails the agent: bad input, an unknown event or platform, or broken packs mean a
    pass-through (no output, exit 0) with one line on stderr.

    Parameters
    ----------
    event
        The event as the platform names it (PreToolUse, BeforeTool, preToolUse ...).
    platform
        The agent platform: claude-code, codex, gemini-cli, cursor, vscode-copilot, kiro, opencode.
    """
    return run_hook(event, platform)
