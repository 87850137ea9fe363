"""`capy bench peer` end to end in a tiny mode, so the instrument cannot rot.

The peer (context-mode from npm) is never installed by the test: it uses the bench's cache
folder as found when the tests start (`.ci/run` pre-installs it there), and skips, saying how
to get it, where Node.js or the install is missing. Figures are checked for shape and sense,
never for speed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capy.bench import peer_install
from capy.cli import main

# Read before the autouse fixture swaps HOME for a temp folder.
PEER_FOLDER = peer_install.cache_folder()
try:
    peer_install.find_peer(PEER_FOLDER, install=False)
    WHY_NOT = ""
except peer_install.PeerMissing as missing:
    WHY_NOT = str(missing)

DOCS = {
    "retention.md": "# Retention\n\n## Durable sources\nIndexed docs stay until evicted.\n\n"
    "## Ephemeral sources\nCommand output expires after its TTL.\n",
    "sandbox.md": "# Sandbox\n\n## Network\nThe executor can run code with no network at all.\n",
}


def bench(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["bench", "peer", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT)
def test_tiny_run_measures_both_servers(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(peer_install.FOLDER_VARIABLE, str(PEER_FOLDER))
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    argv = ["--runs", "1", "--corpus", str(corpus), "--files", "2", "--queries", "2"]
    argv += ["--pause", "0.5"]  # then a pause and the queries again, untimed
    code, out, err = bench(capsys, *argv, "--executes", "1", "--no-install", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["pause_s"] == 0.5
    assert report["peer"] == f"context-mode {peer_install.PEER_VERSION}"
    assert (report["files"], report["queries"], report["runs"]) == (2, 2, 1)
    assert report["corpus_bytes"] == sum(len(text.encode()) for text in DOCS.values())
    assert report["unset_for_peer"] == "NODE_EXTRA_CA_CERTS"
    assert {"capy_index", "capy_search", "capy_execute"} <= set(report["tools"]["capy"])
    assert {"ctx_index", "ctx_search", "ctx_execute"} <= set(report["tools"]["peer"])
    assert len(report["results"]) == 6
    for row in report["results"]:
        assert row["capy"] > 0 and row["peer"] > 0, row
        assert row["ratio"] == pytest.approx(row["capy"] / row["peer"], rel=0.01)
    assert len(report["goals"]) == 5 and all(isinstance(g["met"], bool) for g in report["goals"])
    floor = report["capy_floor"]  # capy's own rows of the same files, one transaction
    assert floor["mb_s"] > 0
    assert floor["over_peer"] == pytest.approx(floor["mb_s"] / report["results"][0]["peer"])


def test_missing_peer_is_one_clear_sentence(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(peer_install.FOLDER_VARIABLE, str(tmp_path / "no-peer"))
    code, out, err = bench(capsys, "--no-install", "--json")
    assert (code, err) == (0, "")
    reason = json.loads(out)["skipped"]
    assert "context-mode" in reason or "Node.js" in reason
    assert "\n" not in reason
    code, out, _ = bench(capsys, "--no-install")
    assert code == 0 and "skipped" in out


def test_bad_corpus_is_an_error_that_says_what_to_do(tmp_path: Path, monkeypatch, capsys):
    if WHY_NOT:
        pytest.skip(WHY_NOT)
    monkeypatch.setenv(peer_install.FOLDER_VARIABLE, str(PEER_FOLDER))
    code, out, err = bench(capsys, "--corpus", str(tmp_path / "absent"), "--no-install")
    assert code == 2 and out == ""
    assert "pass --corpus DIR" in err and "Traceback" not in err


def test_memory_counts_a_child_that_has_not_exec_d_once(tmp_path: Path) -> None:
    """A child between fork and exec is a copy of its parent (vfork: the same pages): the
    sampler leaves it out, and counts a child that exec'd another program."""
    import os
    import subprocess
    import sys
    import time

    from capy.bench.peer_session import descendants

    script = (
        "import os,subprocess,sys,time\n"
        "copy = os.fork()\n"
        "if copy == 0:\n"
        "    time.sleep(60); os._exit(0)\n"
        "other = subprocess.Popen(['sleep', '60'])\n"
        "print(copy, other.pid, flush=True); sys.stdin.read()\n"
        "os.kill(copy, 9); other.kill()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        copy, other = (int(word) for word in parent.stdout.readline().split())
        time.sleep(0.2)  # `sleep` has exec'd
        counted = descendants(os.getpid(), own_programs_only=True)
        every = descendants(os.getpid())
    finally:
        parent.communicate(b"", timeout=30)
    assert {parent.pid, copy, other} <= set(every)
    assert parent.pid in counted and other in counted
    assert copy not in counted
