"""`capy proxy` at the command line: its help says what it records and never stores, and a
start it cannot make is one sentence and exit 2."""

from __future__ import annotations

import socket
import subprocess

from capy.bench.processes import capy_command


def _capy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*capy_command(), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_help_says_what_is_recorded_and_what_is_never_stored():
    done = _capy("proxy", "--help")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    assert "Listens on 127.0.0.1 only" in text
    assert "Recorded, as capsules with source proxy" in text
    assert "Never stored or logged: the API key and every other request header" in text


def test_an_upstream_that_is_not_http_is_one_sentence(warm_project):
    done = _capy("proxy", "--upstream", "ftp://example.org/v1", "--port", "0")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "capy: --upstream 'ftp://example.org/v1' is not an http(s) URL: give the API root, "
        "e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1"
    ]


def test_a_port_in_use_is_one_sentence(warm_project):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = _capy("proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", str(port))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line and "pick another port with --port" in line
