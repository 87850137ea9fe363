"""`capy hook EVENT`: handle one agent hook event (JSON on stdin, the platform's JSON on stdout).

The console script answers hooks without loading this CLI (see `capy.entry`); this command is
the same path for `python -m capy hook ...` and for anyone calling the cyclopts app.
"""

from __future__ import annotations

from capy.entry import DEFAULT_PLATFORM, run_hook


def hook(event: str, /, *, platform: str = DEFAULT_PLATFORM) -> int:
    """Handle one hook event: read its JSON payload on stdin, answer on stdout.

    Never fails the agent: bad input, an unknown event or platform, or broken packs mean a
    pass-through (no output, exit 0) with one line on stderr. The payload is never echoed.

    Exit codes: 0 with the platform's JSON on stdout (a decision, rewritten input or context
    to add), or with nothing on stdout (no opinion: the call goes ahead); the platform's block
    code (2 on every platform the packs know) with the reason on stderr, only where the
    platform refuses a call by exit code rather than by JSON (Kiro). No other code is used.

    Parameters
    ----------
    event
        The event as the platform names it (PreToolUse, BeforeTool, preToolUse ...).
    platform
        The agent platform: claude-code, codex, gemini-cli, cursor, vscode-copilot, kiro, opencode.
    """
    return run_hook(event, platform)
