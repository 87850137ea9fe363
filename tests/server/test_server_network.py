"""capy_execute's network parameter over a real stdio session, against a real loopback server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback_helpers import serve_loopback, text_handler
from server_helpers import capy_session, text_of

from capy.executor import ExecutorError
from capy.executor.network import isolate
from capy.rules.views.executor import NetworkMode

pytestmark = pytest.mark.anyio


@pytest.fixture
def port() -> Iterator[int]:
    try:
        isolate([], NetworkMode.OFF)
    except ExecutorError as exc:
        pytest.skip(str(exc))
    with serve_loopback("127.0.0.1", text_handler(b"hello from loopback")) as bound:
        yield bound


def _curl(port: int) -> str:
    return f"curl -s -m 3 http://127.0.0.1:{port}/ || echo curl-failed"


async def test_network_off_and_on_say_which_mode_ran(
    project_dir: Path, server_home: Path, port: int
) -> None:
    async with capy_session(project_dir, server_home) as client:
        off = await client.call_tool(
            "capy_execute", {"language": "shell", "code": _curl(port), "network": "off"}
        )
        on = await client.call_tool("capy_execute", {"language": "shell", "code": _curl(port)})
        batch = await client.call_tool(
            "capy_batch_execute",
            {
                "commands": [{"label": "get", "command": _curl(port)}],
                "queries": ["hello"],
                "network": "off",
            },
        )
    assert "network off" in text_of(off) and "curl-failed" in text_of(off)
    assert "hello from loopback" not in text_of(off)
    assert "network on" in text_of(on) and "hello from loopback" in text_of(on)
    assert "network off" in text_of(batch) and "hello from loopback" not in text_of(batch)


async def test_an_unknown_network_mode_is_refused_by_the_schema(
    project_dir: Path, server_home: Path
) -> None:
    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_execute", {"language": "shell", "code": "echo hi", "network": "airplane"}
        )
    assert result.is_error and "network" in text_of(result)
