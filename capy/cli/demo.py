"""`capy demo`: a short real session through the MCP server, then the savings report."""

from __future__ import annotations


def demo() -> int:
    """Start capy's MCP server, drive a short session through it, and show the savings.

    The session runs a data-heavy command with an intent, fetches a documentation page served
    on loopback, searches it, and asks for the stats, all through the official MCP client over
    stdio, exactly as an agent would. It uses a throwaway project and database.
    """
    import anyio
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    from capy.cli.output import console, error_line
    from capy.demo.session import Step, run_demo

    out = console()
    out.print(Rule("capy demo: a real MCP session over stdio"))

    def show(step: Step, text: str, is_error: bool) -> None:
        out.print(f"\n[bold]{step.title}[/bold]  ({step.tool})  [dim]{step.explain}[/dim]")
        style = "red" if is_error else "green"
        # Plain text, as the agent reads it: rendering the markdown would hide what it gets.
        out.print(Panel(Text(text), title="what the agent receives", border_style=style))

    outcome = anyio.run(run_demo, show)
    if outcome.failure_log is not None:
        if outcome.failure_log.strip():
            log = Text(outcome.failure_log)
            out.print(Panel(log, title="the server's log (last lines)", border_style="red"))
        error_line("a demo step failed; `capy doctor` checks every part and says what to fix")
        return 1
    if outcome.totals:
        out.print(f"\n[bold]{savings_line(outcome.totals)}[/bold]")
    # The demo's database went with its throwaway project: without this a person runs
    # `capy stats` next and finds nothing of what they just saw.
    out.print(
        "\nThe demo ran in a throwaway project, now deleted, so [bold]capy stats[/bold] here shows "
        "this project's own sessions, not the demo's: the savings report above (the capy_stats "
        "step) was the demo's. Once your agent works through capy, [bold]capy stats[/bold] "
        "shows its latest session.",
    )
    out.print(
        "\nRegister capy with your agent: [bold]capy setup[/bold] (Claude Code; "
        "--platform for others), or add the MCP server command [bold]capy serve[/bold]."
    )
    return 0


def savings_line(totals: dict) -> str:
    from capy.units import human_bytes

    processed, returned = totals["processed_bytes"], totals["returned_bytes"]
    share = 100.0 * max(processed - returned, 0) / processed if processed else 0.0
    tokens = totals["estimated_tokens_saved"]
    return (
        f"capy kept {share:.1f}% of {human_bytes(processed)} out of the agent's context: "
        f"{human_bytes(returned)} returned, about {tokens:,} tokens saved."
    )
