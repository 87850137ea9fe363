"""The capture spool: torn lines, concurrent writers and drainers, draining twice, and the
hook's plain-data redactor matching the secrets view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from capy.capsules.spool import drain_spool, drain_spool_report
from capy.spooling import RECORD_START, append_record, encode_record, read_records


def _record(project: Path, n: int, writer: int = 0) -> dict:
    return {
        "project": str(project),
        "kind": "note",
        "content": f"note {n} from writer {writer}",
        "metadata": {"session_id": f"writer-{writer}"},
        "created_at": f"2026-05-01T12:00:{n % 60:02d}.{writer * 100000 + n:06d}Z",
    }


def _count(capsules) -> int:
    return capsules.conn.execute("SELECT count(*) FROM capsules").fetchone()[0]


def test_a_torn_last_line_is_skipped_and_the_next_record_read_whole(capsules, tmp_path):
    spool = tmp_path / "spool.jsonl"
    project = capsules.location.project_root
    append_record(str(spool), _record(project, 1))
    whole = encode_record({"format": 1, **_record(project, 2)})
    with open(spool, "ab") as stream:
        stream.write(whole[: len(whole) // 2])  # a writer killed mid-record
    append_record(str(spool), _record(project, 3))  # appended right after the torn one
    records, torn = read_records(spool.read_bytes())
    assert [record["content"] for record in records] == [
        "note 1 from writer 0",
        "note 3 from writer 0",
    ]
    assert torn == 1
    report = drain_spool_report(capsules, spool)
    assert (report.written, report.torn) == (2, 1)
    assert _count(capsules) == 2


def test_draining_the_same_records_twice_writes_them_once(capsules, tmp_path):
    spool = tmp_path / "spool.jsonl"
    project = capsules.location.project_root
    for n in range(5):
        append_record(str(spool), _record(project, n))
    copy = spool.read_bytes()
    assert drain_spool(capsules, spool) == 5
    spool.write_bytes(copy)  # as if a drainer died after writing, before deleting its file
    report = drain_spool_report(capsules, spool)
    assert (report.written, report.already) == (0, 5)
    assert _count(capsules) == 5
    assert all(report.ok for report in capsules.verify())


def test_a_refused_record_does_not_hold_back_the_others(capsules, tmp_path):
    spool = tmp_path / "spool.jsonl"
    project = capsules.location.project_root
    append_record(str(spool), _record(project, 1))
    append_record(str(spool), {**_record(project, 2), "kind": "no-such-kind"})
    append_record(str(spool), {**_record(project, 3), "created_at": 12})
    append_record(str(spool), _record(project, 4))
    report = drain_spool_report(capsules, spool)
    assert (report.written, report.refused) == (2, 2)
    assert not spool.exists()


_WRITER = textwrap.dedent(
    """
    import sys
    from capy.spooling import append_record
    spool, project, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for n in range(count):
        append_record(spool, {
            "project": project, "kind": "note", "content": f"note {n} from writer {writer}",
            "metadata": {"session_id": f"writer-{writer}"},
            "created_at": f"2026-05-01T12:00:00.{writer * 100000 + n:06d}Z",
        })
    """
)


def test_concurrent_writers_and_drainers_lose_nothing_and_repeat_nothing(capsules, tmp_path):
    """Several processes append while the spool is drained again and again: afterwards every
    record is in the log exactly once."""
    spool = tmp_path / "spool.jsonl"
    project = str(capsules.location.project_root)
    writers, each = 6, 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(spool), project, str(writer), str(each)]
        )
        for writer in range(writers)
    ]
    drained = 0
    while any(proc.poll() is None for proc in procs):
        drained += drain_spool(capsules, spool)
    assert all(proc.wait(timeout=120) == 0 for proc in procs)
    drained += drain_spool(capsules, spool)
    assert drained == writers * each
    assert _count(capsules) == writers * each
    contents = {row[0] for row in capsules.conn.execute("SELECT content FROM capsules")}
    assert len(contents) == writers * each
    assert all(report.ok for report in capsules.verify())
    assert not [name for name in os.listdir(tmp_path) if ".draining-" in name]


def test_concurrent_hook_processes_are_drained_exactly_once(warm_project):
    """Real `capy hook` processes of one session at once (parallel tool calls), then a drain."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "hooks"))
    from hooks_helpers import hook_command

    from capy.capsules import open_capsules

    calls = 8
    procs = []
    for n in range(calls):
        payload = json.dumps(
            {
                "session_id": "parallel",
                "cwd": str(warm_project),
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": f"echo {n}"},
                "tool_response": {"stdout": f"{n}\n", "stderr": ""},
            }
        ).encode()
        proc = subprocess.Popen(
            hook_command("PostToolUse", "claude-code"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=warm_project,
        )
        procs.append((proc, payload))
    for proc, payload in procs:
        _, err = proc.communicate(payload, timeout=120)
        assert proc.returncode == 0, err
    with open_capsules(project_dir=warm_project) as store:
        assert drain_spool(store) == calls
        assert drain_spool(store) == 0
        commands = sorted(
            json.loads(row[0])["command"]
            for row in store.conn.execute("SELECT metadata FROM capsules")
        )
    assert commands == sorted(f"echo {n}" for n in range(calls))


def test_a_second_drainer_leaves_the_work_to_the_first(capsules, tmp_path):
    import fcntl

    spool = tmp_path / "spool.jsonl"
    append_record(str(spool), _record(capsules.location.project_root, 1))
    fd = os.open(str(spool) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert drain_spool_report(capsules, spool) is None
    finally:
        os.close(fd)
    assert drain_spool(capsules, spool) == 1


def test_record_separators_never_occur_inside_a_record():
    line = encode_record({"content": "a\x1eb\nc"})
    assert line.count(RECORD_START) == 1 and line.endswith(b"\n") and line.count(b"\n") == 1


@pytest.fixture(scope="module")
def secrets_view():
    from capy.rules import build_ruleset

    return build_ruleset().view("secrets")


def test_the_hook_redactor_finds_what_the_secrets_view_finds(secrets_view):
    """Every detector's examples, alone and all together: the same spans, rules and masks."""
    from capy.masking import PlainSecrets, plain_detectors
    from capy.security.redaction import redact_text

    plain = PlainSecrets(json.loads(json.dumps(plain_detectors(secrets_view))))
    assert len(plain_detectors(secrets_view)["detectors"]) == len(secrets_view.active_detectors)
    texts = [
        text
        for detector in secrets_view.active_detectors
        if detector.examples is not None
        for text in (*detector.examples.match, *detector.examples.no_match)
    ]
    texts.append("\n".join(texts[:200]))
    for text in texts:
        expected = [(f.rule_id, f.start, f.end) for f in secrets_view.find_secrets(text)]
        assert [(f.rule_id, f.start, f.end) for f in plain.find_secrets(text)] == expected
        assert plain.redact(text) == redact_text(text, secrets=secrets_view)
