"""`capy index | search | reindex | cleanup`, in-process and as real subprocesses."""

from __future__ import annotations

import io
import json
import sys

import pytest
from indexing_helpers import capy, normalise

from capy.cli import main
from capy.store import open_store

GUIDE = """# Deploying capy

## Rollback

To roll back a release, run `capy rollback --to previous`. The quokka service restarts.

## Secrets

The deploy token is ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8 and must never be logged.
"""


@pytest.fixture
def guide(project_dir, cached_rules):
    path = project_dir / "docs" / "deploy.md"
    path.parent.mkdir()
    path.write_text(GUIDE, encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def feed_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_index_a_file_then_again(guide, capsys, snapshot) -> None:
    first = run(capsys, "index", "docs/deploy.md")
    again = run(capsys, "index", "docs/deploy.md")
    changed = run(
        capsys,
        "index",
        "docs/deploy.md",
        "--source",
        "docs/deploy.md",
        "--content-type",
        "plaintext",
    )
    assert (first, again, changed) == snapshot


def test_index_json(guide, capsys) -> None:
    code, out, err = run(
        capsys, "index", str(guide), "--source", "deploy", "--kind", "session", "--json"
    )
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["label"] == "deploy" and result["kind"] == "session"
    assert result["redactions"] == {"secrets.github-pat": 1}
    assert result["status"] == "indexed" and result["chunk_count"] >= 2


def test_index_standard_input(cached_rules, capsys, monkeypatch) -> None:
    feed_stdin(monkeypatch, b"pytest output: 3 failed, 10 passed\n")
    code, out, _ = run(capsys, "index", "-", "--source", "pytest run", "--kind", "ephemeral")
    assert code == 0
    assert out.startswith("indexed pytest run (ephemeral, ")


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["index", "missing.txt"], None),
        (["index", "-"], b"text"),
        (["index", "-", "--source", "empty"], b""),
        (["index", "-", "--source", "blob"], b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        (["index", "-", "--source", "x", "--kind", "forever"], b"text"),
        (["index", "-", "--source", "x", "--content-type", "pdf"], b"text"),
        (["search"], None),
        (["search", "quokka", "--kind", "forever"], None),
        (["search", "quokka", "--limit", "0"], None),
    ],
    ids=[
        "missing-file", "stdin-without-label", "empty", "binary", "bad-kind", "bad-type",
        "no-query", "search-bad-kind", "bad-limit",
    ],
)  # fmt: skip
def test_errors_are_one_line_and_exit_2(
    cached_rules, capsys, monkeypatch, snapshot, argv, stdin
) -> None:
    if stdin is not None:
        feed_stdin(monkeypatch, stdin)
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("capy: ")
    assert err == snapshot


def test_search_text_output(guide, capsys) -> None:
    run(capsys, "index", "docs/deploy.md")
    code, out, err = run(capsys, "search", "roll back a release", "nothingmatcheszzz")
    assert (code, err) == (0, "")
    first, second = out.split("\n\n")
    assert first.startswith("'roll back a release': ")
    assert "docs/deploy.md › " in first and "Rollback" in first
    assert second.startswith("'nothingmatcheszzz': 0 hits")


def test_search_json_shape(guide, capsys) -> None:
    run(capsys, "index", "docs/deploy.md")
    code, out, _ = run(capsys, "search", "quokka", "deploy token", "--json", "--limit", "3")
    assert code == 0
    payload = json.loads(out)
    assert [entry["query"] for entry in payload["queries"]] == ["quokka", "deploy token"]
    for entry in payload["queries"]:
        assert set(entry) == {"query", "corrected_query", "note", "hits"}
        assert 1 <= len(entry["hits"]) <= 3
        for hit in entry["hits"]:
            assert set(hit) == {
                "source_label", "kind", "title", "content", "snippet", "layer", "score",
            }  # fmt: skip
            assert hit["source_label"] == "docs/deploy.md"
            assert hit["layer"] in {"porter", "trigram", "fuzzy", "rrf"}
            assert "ghp_" not in hit["content"]
    assert "quokka" in payload["queries"][0]["hits"][0]["content"]


def test_search_filters_by_kind_and_source(cached_rules, capsys, monkeypatch) -> None:
    for label, kind in [("a.log", "ephemeral"), ("b.md", "durable")]:
        feed_stdin(monkeypatch, b"the pangolin migration finished\n")
        assert run(capsys, "index", "-", "--source", label, "--kind", kind)[0] == 0

    def labels(*argv: str) -> list[str]:
        out = run(capsys, "search", "pangolin", "--json", *argv)[1]
        return sorted({hit["source_label"] for hit in json.loads(out)["queries"][0]["hits"]})

    assert labels() == ["b.md"]  # ephemeral is not searched by default
    assert labels("--kind", "ephemeral") == ["a.log"]
    assert labels("--kind", "ephemeral", "--kind", "durable") == ["a.log", "b.md"]
    assert labels("--kind", "ephemeral", "--kind", "durable", "--source", "a.*") == ["a.log"]


def test_reindex(guide, capsys, snapshot) -> None:
    run(capsys, "index", "docs/deploy.md")
    nothing = run(capsys, "reindex")
    with open_store() as store:
        store.conn.execute("UPDATE sources SET index_version = 'older'")
    rebuilt = run(capsys, "reindex")
    forced = run(capsys, "reindex", "--all")
    assert [
        (code, normalise(out), err) for code, out, err in (nothing, rebuilt, forced)
    ] == snapshot


def test_opening_rebuilds_a_small_stale_backlog(guide, cached_rules, capsys) -> None:
    run(capsys, "index", "docs/deploy.md")
    with open_store() as store:
        store.conn.execute("UPDATE sources SET index_version = 'older'")
    assert run(capsys, "search", "quokka")[0] == 0
    with open_store() as store:
        versions = store.conn.execute("SELECT DISTINCT index_version FROM sources").fetchall()
    assert versions == [(cached_rules.index_version,)]


def test_cleanup_dry_run_then_apply(guide, capsys, snapshot) -> None:
    run(capsys, "index", "docs/deploy.md")
    run(capsys, "index", "docs/deploy.md", "--source", "copy", "--kind", "ephemeral")
    nothing = run(capsys, "cleanup")
    dry = run(capsys, "cleanup", "--source", "copy")
    applied = run(capsys, "cleanup", "--source", "copy", "--apply", "--optimize", "--vacuum")
    assert (nothing, dry, applied) == snapshot
    with open_store() as store:
        assert store.conn.execute("SELECT label FROM sources").fetchall() == [("docs/deploy.md",)]


def test_cleanup_json(guide, capsys) -> None:
    run(capsys, "index", "docs/deploy.md")
    code, out, _ = run(capsys, "cleanup", "--source", "docs/deploy.md", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["applied"] is False and payload["removed"] == []
    assert [(item["label"], item["reason"]) for item in payload["planned"]] == [
        ("docs/deploy.md", "requested")
    ]


def test_round_trip_through_real_processes(guide, project_dir) -> None:
    indexed = capy("index", "docs/deploy.md", "--json")
    assert indexed.returncode == 0, indexed.stderr
    piped = capy(
        "index",
        "-",
        "--source",
        "build log",
        "--kind",
        "ephemeral",
        stdin=b"linker error: undefined symbol quux_init\n",
    )
    assert piped.returncode == 0, piped.stderr
    found = capy(
        "search",
        "quokka service",
        "quux_init",
        "--kind",
        "durable",
        "--kind",
        "ephemeral",
        "--json",
    )
    assert found.returncode == 0, found.stderr
    queries = json.loads(found.stdout)["queries"]
    assert queries[0]["hits"][0]["source_label"] == "docs/deploy.md"
    assert queries[1]["hits"][0]["source_label"] == "build log"
    assert queries[1]["hits"][0]["kind"] == "ephemeral"


def test_db_option_and_environment_variable(guide, project_dir, monkeypatch) -> None:
    elsewhere = project_dir / "elsewhere.db"
    assert capy("index", "docs/deploy.md", "--db", str(elsewhere)).returncode == 0
    assert elsewhere.is_file()
    default = json.loads(capy("search", "quokka", "--json").stdout)
    assert default["queries"][0]["hits"] == []
    monkeypatch.setenv("CAPY_DB_PATH", str(elsewhere))
    via_env = json.loads(capy("search", "quokka", "--json").stdout)
    assert via_env["queries"][0]["hits"][0]["source_label"] == "docs/deploy.md"


def test_a_subprocess_error_is_one_line(cached_rules, project_dir, snapshot) -> None:
    result = capy("index", "nope.txt")
    assert result.returncode == 2
    assert normalise(result.stderr.decode(), project_dir) == snapshot


def test_index_a_folder_names_the_file_that_failed(project_dir) -> None:
    folder = project_dir / "docs"
    (folder / "api").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "guide.md").write_text("# Guide\n\nInstall with pipx.\n", encoding="utf-8")
    (folder / "api" / "calls.md").write_text("# Calls\n\nPOST /v1/jobs\n", encoding="utf-8")
    (folder / "api" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (folder / "empty.py").write_text("", encoding="utf-8")
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    done = capy("index", "docs", cwd=project_dir)
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "indexed docs/api/calls.md (durable, markdown)" in out
    assert "indexed docs/guide.md (durable, markdown)" in out
    assert "2 sources indexed or current, 1 failed" in out
    assert ".git" not in out and "empty.py" not in out
    assert done.stderr.decode().splitlines() == [
        "capy: refusing to index 'docs/api/logo.png': it looks like binary data, not text; "
        "index a text rendering of it instead (for example a hex dump or the output of a "
        "converter)"
    ]
    found = capy("search", "pipx", cwd=project_dir)
    assert "docs/guide.md" in found.stdout.decode()


def test_split_refuses_a_folder(project_dir) -> None:
    (project_dir / "docs").mkdir()
    done = capy("index", "docs", "--split", cwd=project_dir)
    assert done.returncode == 2
    assert done.stderr.decode() == "capy: --split cuts one large input; give a file, not a folder\n"
