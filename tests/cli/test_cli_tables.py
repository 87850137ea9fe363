"""What `capy stats`, `capy doctor` and the other table printers show a person: rich tables on a
terminal (colour unless NO_COLOR), plain aligned columns without box drawing in a pipe, and
always redacted, with control characters neutralised. Real `capy` processes on a pty and piped.
"""

from __future__ import annotations

import io
import os
import re

import pytest
from terminal_helpers import on_terminal, piped

ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*3[0-7]m|\x1b\[[0-9;]*38;")  # a foreground colour
BOX = set("│┃━─┡╇┼")
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"


def _index(label: str, text: str = "release notes for the payment service\n") -> None:
    """Index `text` through the real command, so the knowledge base has a kind to report."""
    done = piped("index", "-", "--source", label, "--kind", "ephemeral", stdin=text)
    assert done.returncode == 0, done.stderr


def test_stats_is_a_rich_table_on_a_terminal_and_plain_columns_in_a_pipe(project_dir):
    _index("notes")
    terminal = on_terminal("stats")
    pipe = piped("stats")
    assert terminal.exit_code == 0 and pipe.returncode == 0, pipe.stderr
    # On the terminal: box drawing, bold headings, no markdown pipes or emphasis markers.
    assert BOX & set(terminal.output)
    assert "\x1b[1" in terminal.output and "## Knowledge base" not in terminal.output
    assert "|---" not in terminal.output and "| kind |" not in terminal.output
    # In the pipe: the markdown text as it was, the table as aligned columns.
    assert not BOX & set(pipe.stdout) and "\x1b" not in pipe.stdout
    assert "## Knowledge base" in pipe.stdout and "|" not in pipe.stdout
    lines = pipe.stdout.splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("kind "))
    assert re.fullmatch(r"kind +sources +raw size +tiers", lines[header])
    assert re.fullmatch(r"-+ +-+ +-+ +-+", lines[header + 1])
    row = lines[header + 2]
    assert row.startswith("ephemeral ") and re.search(r"  \w+ 1$", row)
    # Numbers are right-aligned under their header (the markdown's ---: columns).
    assert lines[header].index("sources") + len("sources") == row.index(" 1 ") + 2


def test_doctor_colours_statuses_on_a_terminal_unless_no_color(project_dir):
    coloured = on_terminal("doctor")
    plain = on_terminal("doctor", NO_COLOR="1")
    pipe = piped("doctor")
    assert coloured.exit_code == plain.exit_code == pipe.returncode
    assert ANSI_COLOUR.search(coloured.output)
    assert not ANSI_COLOUR.search(plain.output) and BOX & set(plain.output)
    assert "**" not in coloured.output  # the summary's emphasis is rendered, not shown
    assert not BOX & set(pipe.stdout) and "\x1b" not in pipe.stdout
    assert re.search(r"^ok +Python and capy +capy ", pipe.stdout, re.M)
    assert re.search(r"^ +fix: ", pipe.stdout, re.M)  # a fix sits under its check


def test_cells_are_redacted_and_cannot_style_or_drive_the_terminal(project_dir):
    path = f"/tmp/{TOKEN}/\x1b]0;owned\x07[bold red]x[/bold red].db"
    for output in (
        on_terminal("config", "show", columns=300, CAPY_DB_PATH=path).output,
        piped("config", "show", CAPY_DB_PATH=path).stdout,
    ):
        assert "CAPY_DB_PATH" in output
        assert TOKEN not in output and "[REDACTED:secrets.github-pat]" in output
        assert "\x1b]0;owned" not in output and "\x07" not in output
        assert "[bold red]x[/bold red]" in output  # shown as written, not read as markup


def test_markdown_tables_in_a_reply_parse_alignment_escapes_and_fences():
    from capy.cli.tables import print_markdown

    out = io.StringIO()
    print_markdown(
        "# Title\n\n| name | size |\n|---|---:|\n| a\\|b | 10 |\n| **c** | 2000 |\n\n"
        "```\n| not | a table |\n|---|---|\n```\nafter",
        file=out,
    )
    lines = out.getvalue().splitlines()
    assert lines[:6] == ["# Title", "", "name  size", "----  ----", "a|b     10", "c     2000"]
    assert lines[6:] == ["", "```", "| not | a table |", "|---|---|", "```", "after"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_stats_after_a_real_session_lays_out_the_tool_table(project_dir):
    """A real `capy serve` session records a call; `capy stats` then shows its table."""
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "capy", "serve", "--project", str(project_dir)],
        cwd=str(project_dir),
        env=dict(os.environ),
    )
    with (project_dir / "server.log").open("w") as log:
        async with Client(stdio_client(params, errlog=log), read_timeout_seconds=120) as client:
            await client.call_tool("capy_execute", {"language": "sh", "code": "seq 1 20000"})
    terminal, pipe = on_terminal("stats", columns=100), piped("stats")
    assert pipe.returncode == 0, pipe.stderr
    header = r"tool +calls +errors +processed +returned +kept out"
    assert re.search(rf"^{header}$", pipe.stdout, re.M)
    assert re.search(r"^capy_execute +1 +0 +\d", pipe.stdout, re.M)
    assert re.search(r"capy_execute\s*│\s*1\s*│\s*0\s*│", terminal.output)
    assert "**" not in terminal.output and "kept out" in terminal.output
