"""`capy bench proxy`: what `capy proxy` adds to a chat completion against the direct call."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import JsonFlag, _emit, _progress


def proxy(*, rounds: int = 200, json_output: JsonFlag = False, markdown: Path | None = None) -> int:
    """Time chat completions through `capy proxy` and straight to the same loopback upstream,
    alternating, and count the capsules the proxy recorded.

    Parameters
    ----------
    rounds
        Conversation turns sent each way (a JSON reply and a streamed one per turn).
    markdown
        Also write the tables as markdown to this file.
    """
    from capy.bench.proxy import proxy_tables, run

    with _progress(not json_output) as update:
        report = run(rounds, progress=update)
    return _emit(report, proxy_tables(report), json_output, markdown)
