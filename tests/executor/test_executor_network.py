"""Network modes: with the network off, sandboxed code reaches nothing, loopback included.

A real HTTP server on loopback, started by the test, is the target: with the network on the
code fetches its page; with it off (a fresh network namespace) the connection fails.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback_helpers import serve_loopback, text_handler

from capy.executor import ExecutorError, execute, execute_batch, execute_file
from capy.executor.network import isolate
from capy.rules.views.executor import NetworkMode


@pytest.fixture
def port() -> Iterator[int]:
    with serve_loopback("127.0.0.1", text_handler(b"hello from loopback")) as bound:
        yield bound


@pytest.fixture
def offline_available() -> None:
    try:
        isolate([], NetworkMode.OFF)
    except ExecutorError as exc:
        pytest.skip(str(exc))


def _fetch(port: int) -> str:
    return (
        "import urllib.request\n"
        f"url = 'http://127.0.0.1:{port}/'\n"
        "try:\n"
        "    print(urllib.request.urlopen(url, timeout=5).read().decode())\n"
        "except OSError as exc:\n"
        "    print('unreachable:', exc)\n"
    )


def test_with_the_network_on_loopback_is_reached(port: int, view) -> None:
    result = execute("python", _fetch(port), rules=view, network="on")
    assert result.output.strip() == "hello from loopback"
    assert result.network == "on"


def test_with_the_network_off_loopback_is_unreachable(port: int, view, offline_available) -> None:
    result = execute("python", _fetch(port), rules=view, network="off")
    assert result.output.startswith("unreachable:"), result.output
    assert result.network == "off"


def test_network_off_holds_for_every_child_and_for_shell_tools(
    port: int, view, offline_available
) -> None:
    code = f"(curl -s -m 3 http://127.0.0.1:{port}/ || echo curl-failed) | cat"
    result = execute("shell", code, rules=view, network="off")
    assert "hello" not in result.output and "curl-failed" in result.output


def test_the_pack_default_decides_when_the_call_names_no_mode(
    port: int, view, offline_available
) -> None:
    offline = view.model_copy(
        update={"network": view.network.model_copy(update={"default": NetworkMode.OFF})}
    )
    result = execute("python", _fetch(port), rules=offline)
    assert result.network == "off" and result.output.startswith("unreachable:")
    # ...and a call may still ask for the network back.
    assert execute("python", _fetch(port), rules=offline, network="on").network == "on"


def test_execute_file_and_batch_take_the_mode(
    port: int, view, offline_available, tmp_path: Path
) -> None:
    target = tmp_path / "data.txt"
    target.write_text("x")
    result = execute_file(target, "python", _fetch(port), rules=view, network="off")
    assert result.output.startswith("unreachable:")
    results = execute_batch(
        [("get", f"curl -s -m 3 http://127.0.0.1:{port}/ || echo curl-failed")],
        rules=view,
        network="off",
    )
    assert results[0].network == "off" and "curl-failed" in results[0].output


def test_an_unknown_mode_is_one_clear_error(view) -> None:
    with pytest.raises(ExecutorError, match="unknown network mode 'airplane'"):
        execute("python", "print(1)", rules=view, network="airplane")


def test_the_cli_runs_offline_and_says_so(port: int, offline_available, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "capy", "execute", "python", _fetch(port), "--network", "off"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.startswith("unreachable:"), done
    assert "network off" in done.stderr
