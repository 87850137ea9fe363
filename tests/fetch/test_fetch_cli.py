"""`capy fetch`: the same markdown the tool returns, JSON on request, exit codes a script can
branch on. Two tests run the real command; the rest call the command function in-process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _capy(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_capy_fetch_prints_the_tool_reply(site, allow_loopback, project_dir):
    url = site.url("/docs.html")
    done = _capy("fetch", url, "--source", "guide", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Fetch: 1 URL (1 indexed)\n")
    assert f"## {url}\n" in done.stdout
    # Worded for a person: the command that searches it, not the agent's tool call.
    assert "Search: `capy search '<what you need>' --source guide`" in done.stdout
    assert "capy_search" not in done.stdout
    assert done.stderr == ""


def test_capy_fetch_json_carries_every_outcome(site, allow_loopback, project_dir):
    done = _capy("fetch", site.url("/data.json"), site.url("/missing"), "--json", cwd=project_dir)
    assert done.returncode == 1  # one URL failed; the other was still indexed
    data = json.loads(done.stdout)
    assert [item["status"] for item in data["urls"]] == ["indexed", "failed"]
    assert data["urls"][1]["failure"] == "http-status"
    assert data["is_error"] is False
    assert data["text"].startswith("# Fetch: 2 URLs")


def test_fetch_force_refetches(site, allow_loopback, capsys):
    from capy.cli.fetch import fetch

    url = site.url("/notes.txt")
    assert fetch(url) == 0
    capsys.readouterr()
    assert fetch(url) == 0
    cached = capsys.readouterr().out
    assert fetch(url, force=True) == 0
    forced = capsys.readouterr().out
    assert "From the cache" in cached
    assert "--force refetches" in cached and "force=true" not in cached
    assert "Fetched again, content unchanged" in forced
    assert site.hits["/notes.txt"] == 2


@pytest.mark.parametrize(
    ("urls", "options", "expected"),
    [
        (("https://example.com/",), {"kind": "session"}, "kind must be durable"),
        ((), {}, "at least one URL"),
    ],
)
def test_fetch_refuses_bad_arguments_in_one_line(capsys, urls, options, expected):
    from capy.cli.fetch import fetch

    assert fetch(*urls, **options) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("capy: ") and expected in captured.err
