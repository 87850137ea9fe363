"""The demo's session: a real `capy serve` over stdio, driven by the official MCP client.

It runs in a throwaway project with its own database and key, so it leaves nothing in the
user's knowledge base; the fetch allowance for loopback is given to this server only.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# A test run shaped like pytest's: hundreds of passing tests, two failures with tracebacks.
# This is what an agent would otherwise pour into its context to find two lines.
TEST_RUN = r"""
import random
random.seed(7)
modules = ["api", "auth", "billing", "cache", "cli", "db", "export", "search", "sync", "ui"]
for number in range(1, 1201):
    module = modules[number % len(modules)]
    print(f"tests/test_{module}.py::test_case_{number:04d} PASSED [{number * 100 // 1200:3d}%]")
    if number == 517:
        print("tests/test_billing.py::test_invoice_rounding FAILED")
    if number == 902:
        print("tests/test_sync.py::test_resume_after_disconnect FAILED")
print("=" * 30 + " FAILURES " + "=" * 30)
print("____ test_invoice_rounding ____")
print("    def test_invoice_rounding():")
print(">       assert total_cents(invoice) == 1999")
print("E       AssertionError: assert 2000 == 1999")
print("tests/test_billing.py:88: AssertionError")
print("____ test_resume_after_disconnect ____")
print(">       client.resume(token)")
print("E       TimeoutError: resume took longer than 5.0 s")
print("tests/test_sync.py:141: TimeoutError")
print("FAILED tests/test_billing.py::test_invoice_rounding - AssertionError: assert 2000 == 1999")
print("FAILED tests/test_sync.py::test_resume_after_disconnect - TimeoutError")
print("======= 2 failed, 1200 passed in 41.27s =======")
"""


@dataclass(frozen=True)
class Step:
    title: str
    tool: str
    arguments: dict
    explain: str


def steps(url: str) -> list[Step]:
    return [
        Step(
            "Run a test suite with an intent",
            "capy_execute",
            {"language": "python", "code": TEST_RUN, "intent": "which tests failed and why"},
            "The whole run is indexed; only the failures come back.",
        ),
        Step(
            "Fetch a documentation page",
            "capy_fetch_and_index",
            {"url": url, "source": "httpkit docs"},
            "Converted to markdown and indexed; a preview comes back, not the page.",
        ),
        Step(
            "Search what was indexed",
            "capy_search",
            {"queries": ["retry backoff", "read timeout"], "source": "httpkit docs"},
            "Only the matching sections.",
        ),
        Step("Ask for the savings report", "capy_stats", {}, "What this session kept out."),
    ]


@dataclass
class DemoOutcome:
    failure_log: str | None = None  # the end of the server's log when a step failed
    totals: dict | None = None  # the session's totals from capy_stats' structured result


async def run_demo(show: Callable[[Step, str, bool], None]) -> DemoOutcome:
    """Drive the steps through a real server; `show` prints each step's reply."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from capy.demo.site import docs_site

    with tempfile.TemporaryDirectory(prefix="capy-demo-") as folder, docs_site() as url:
        project = Path(folder)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "capy", "serve", "--project", str(project), "--db", str(project / "kb.db")],
            cwd=str(project),
            env=_server_env(),
        )
        ok, outcome = True, DemoOutcome()
        log_path = project / "server.log"
        # The server's own log stays out of the demo's output unless something went wrong.
        with log_path.open("w", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                for step in steps(url):
                    result = await client.call_tool(step.tool, step.arguments)
                    texts = [block.text for block in result.content if block.type == "text"]
                    ok = ok and not result.is_error
                    show(step, "\n".join(texts), result.is_error)
                    session = (result.structured_content or {}).get("session") or {}
                    outcome.totals = session.get("total", outcome.totals)
        if not ok:
            lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
            outcome.failure_log = "\n".join(lines[-20:])
        return outcome


def _server_env() -> dict[str, str]:
    """This server's own key (nothing written to the user's key files) and loopback allowance."""
    env = {
        "CAPY_DB_KEY": secrets.token_hex(32),
        "CAPY_FETCH__ALLOW_HOSTS": "127.0.0.1",
    }
    # The server must find the same capy the demo runs from, installed or not.
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env
