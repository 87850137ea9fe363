"""`capy capsules add | list | show | archive | export | import`, run as the real `capy`
command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from capy.capsules import CapsuleDraft, open_capsules


def capy(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "capy", *argv], capture_output=True, text=True, timeout=120
    )


def test_add_list_and_show(project_dir) -> None:
    added = capy(
        "capsules",
        "add",
        "decision",
        "pin",
        "zstandard",
        "--tag",
        "deps",
        "--meta",
        "files=pyproject.toml",
        "--meta",
        "exit_status=0",
        "--meta",
        "session_id=s1",
    )
    assert added.returncode == 0, added.stderr
    capsule_id = added.stdout.split()[0]
    assert added.stdout == f"{capsule_id} (decision, written)\n"
    assert capy("capsules", "add", "note", "another").returncode == 0
    listed = json.loads(capy("capsules", "list", "--json").stdout)
    assert [item["kind"] for item in listed] == ["note", "decision"]
    only = json.loads(capy("capsules", "list", "--session", "s1", "--json").stdout)
    assert [item["id"] for item in only] == [capsule_id]
    assert only[0]["metadata"] == {
        "exit_status": 0,
        "files": ["pyproject.toml"],
        "session_id": "s1",
        "tags": ["deps"],
    }
    assert json.loads(capy("capsules", "list", "--kind", "note", "--limit", "1", "--json").stdout)
    table = capy("capsules", "list").stdout.splitlines()
    assert table[0].split() == ["id", "created", "(UTC)", "kind", "session", "content"]
    assert capsule_id[:12] in table[3] and "pin zstandard" in table[3]
    shown = capy("capsules", "show", capsule_id[:8])
    assert shown.returncode == 0
    assert shown.stdout.startswith(f"capsule {capsule_id}\n  kind decision, source cli")
    assert shown.stdout.endswith("\npin zstandard\n")
    assert json.loads(capy("capsules", "show", capsule_id, "--json").stdout)["id"] == capsule_id


def test_bad_input_is_one_line_and_exit_2(project_dir) -> None:
    for argv, message in [
        (("add", "gossip", "x"), "capy: unknown capsule kind 'gossip': use one of"),
        (("add", "note", "x", "--meta", "exit_status=ok"), "capy: --meta exit_status takes a"),
        (("add", "note", "x", "--meta", "novalue"), "capy: --meta 'novalue' is not key=value"),
        (("list", "--since", "someday"), "capy: --since 'someday' is neither a time"),
        (("list", "--limit", "0"), "capy: --limit must be at least 1"),
        (("show", "abc"), "capy: give at least 6 characters of the capsule id"),
        (("import",), "capy: give a JSONL file or an exported folder, or --from-vault"),
    ]:
        done = capy("capsules", *argv)
        assert done.returncode == 2, argv
        assert done.stderr.startswith(message), done.stderr
        assert len(done.stderr.splitlines()) == 1


def test_export_import_round_trip_and_a_tampered_segment(project_dir, tmp_path) -> None:
    with open_capsules(project_dir=project_dir) as capsules:
        capsules.write(
            [
                CapsuleDraft("note", f"note {n}", "cli", created_at=f"2026-11-0{1 + n % 2}")
                for n in range(6)
            ]
        )
    archived = json.loads(capy("capsules", "archive", "--json").stdout)
    assert (archived["segments"], archived["capsules"]) == (2, 6)
    exported = capy("capsules", "export", str(tmp_path / "out"))
    assert exported.stdout == f"exported 6 capsules in 2 segments to {tmp_path / 'out'}\n"
    other = ("--path", str(tmp_path / "other.db"))
    first = json.loads(capy("capsules", "import", str(tmp_path / "out"), "--json", *other).stdout)
    assert (first["new"], first["known"]) == (6, 0)
    again = capy("capsules", "import", str(tmp_path / "out"), *other)
    assert again.stdout == "imported 0 new capsules of 6 read (6 were already there)\n"
    segment = next((tmp_path / "out").rglob("*.jsonl.zst"))
    segment.write_bytes(segment.read_bytes()[:-1] + b"!")
    third = tmp_path / "third.db"
    refused = capy("capsules", "import", str(tmp_path / "out"), "--path", str(third))
    assert refused.returncode == 2
    assert refused.stderr.startswith("capy: segment ") and "was altered" in refused.stderr
    assert json.loads(capy("capsules", "verify", "--json", "--path", str(third)).stdout) == []


def test_import_from_the_vault(project_dir, shared_testdata) -> None:
    source = shared_testdata("claude-transcripts", "spotter")
    assert capy("vault", "import", "--source", str(source)).returncode == 0
    first = json.loads(capy("capsules", "import", "--from-vault", "--json").stdout)
    assert first["sessions"] >= 4 and first["new"] > 100
    again = json.loads(capy("capsules", "import", "--from-vault", "--json").stdout)
    assert (again["new"], again["known"]) == (0, first["read"])
