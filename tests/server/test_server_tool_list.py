"""A start answers tools/list from the file an earlier start wrote, and builds its tools after.

The answer from the file must be the very answer the built tools give, and a server that listed
from it must still run its tools (built by the call that needs them, if the background did not
get there first).
"""

from __future__ import annotations

import os

import anyio
import pytest

from capy.api.workspace import Workspace
from capy.server.app import build_server
from capy.server.tool_list import _path, load_tool_list


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    (tmp_path / "data" / "capy").mkdir(parents=True)  # a data folder capy already keeps
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    return tmp_path


def test_the_second_start_lists_from_the_file_and_still_runs_tools(data_home) -> None:
    first = build_server(Workspace(keep_store_open=True))
    built = anyio.run(first.list_tools)
    assert load_tool_list(False) == built  # written by the start that built them

    second = build_server(Workspace(keep_store_open=True))
    listed = anyio.run(second.list_tools)
    assert listed == built
    assert not second._tools_added  # answered without building a tool

    async def call():
        return await second.call_tool("capy_stats", {})

    result = anyio.run(call)
    assert not result.is_error and second._tools_added


def test_a_file_anyone_may_write_or_a_damaged_one_is_not_read(data_home) -> None:
    anyio.run(build_server(Workspace(keep_store_open=True)).list_tools)
    path = _path(False)
    os.chmod(path, 0o666)
    assert load_tool_list(False) is None
    os.chmod(path, 0o600)
    with open(path, "w") as stream:
        stream.write("[{]")
    assert load_tool_list(False) is None
    assert anyio.run(build_server(Workspace(keep_store_open=True)).list_tools)  # built instead


def test_the_hooks_variant_has_a_file_of_its_own(data_home) -> None:
    plain = anyio.run(build_server(Workspace(keep_store_open=True)).list_tools)
    hooked = anyio.run(build_server(Workspace(keep_store_open=True), mcp_hooks=True).list_tools)
    assert {tool.name for tool in hooked} - {tool.name for tool in plain} == {"capy_hook"}
    assert load_tool_list(True) == hooked and load_tool_list(False) == plain


def test_the_file_keeps_the_order_of_parameters(data_home) -> None:
    built = anyio.run(build_server(Workspace(keep_store_open=True)).list_tools)
    listed = anyio.run(build_server(Workspace(keep_store_open=True)).list_tools)
    for one, other in zip(built, listed, strict=True):
        assert list(one.input_schema["properties"]) == list(other.input_schema["properties"])
