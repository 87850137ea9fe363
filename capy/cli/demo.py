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

    failure_log = anyio.run(run_demo, show)
    if failure_log is not None:
        if failure_log.strip():
            out.print(Panel(failure_log, title="the server's log (last lines)", border_style="red"))
        error_line("a demo step failed; `capy doctor` checks every part and says what to fix")
        return 1
    out.print(
        "\nRegister capy with your agent: [bold]capy setup[/bold] (Claude Code; "
        "--platform for others), or add the MCP server command [bold]capy serve[/bold]."
    )
    return 0
