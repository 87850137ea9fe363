"""A real `capy serve` over stdio, driven by the official MCP SDK client."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server_home(tmp_path_factory) -> Path:
    """One HOME for this module's servers, so the compiled-rules cache is built only once."""
    return tmp_path_factory.mktemp("server-home")
