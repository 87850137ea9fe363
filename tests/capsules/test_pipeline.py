"""The pipeline worker on a real SQLCipher log: drain, retries, stale versions, rebuild, and a
worker killed mid-job (a real subprocess, SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from capy.capsules import CapsuleDraft, CapsuleError
from capy.capsules.pipeline import drain, rebuild
from capy.capsules.pipeline.worker import Worker
from capy.capsules.sqlite import pipeline as sql

TEXTS = [
    "We decided to keep SQLite as the default.",
    "pytest failed: KeyError in capy/store/database.py",
    "editing settings.py fixed the KeyError",
    "import httpx\nfrom sqlcipher3 import dbapi2",
    "thanks @alice, open_database() raised OperationalError",
]


def _write(store, count: int = 30) -> None:
    store.write(
        [
            CapsuleDraft(
                kind="note",
                content=f"{TEXTS[i % len(TEXTS)]} (run {i})",
                source="cli",
                metadata={"session_id": f"s{i % 2}", "command": "pytest -q"},
            )
            for i in range(count)
        ]
    )


def derived_snapshot(conn) -> dict[str, list]:
    """Every derived row, keyed by what it means rather than by rowids a rebuild renumbers."""
    name = "(SELECT type || ':' || name FROM entities WHERE id = {})"
    queries = {
        "chunks": "SELECT rowid, title, content FROM capsule_chunks ORDER BY rowid",
        "trigram": "SELECT rowid FROM capsule_chunks_trigram ORDER BY rowid",
        "chunk_sets": "SELECT * FROM capsule_chunk_sets ORDER BY capsule_n",
        "mentions": f"SELECT capsule_n, {name.format('entity_id')}, mentions, version "
        "FROM capsule_entities ORDER BY 1, 2",
        "relations": f"SELECT capsule_n, {name.format('subject_id')}, relation, "
        f"{name.format('object_id')}, version FROM capsule_relations ORDER BY 1, 2, 3, 4",
        "edges": f"SELECT {name.format('a')}, {name.format('b')}, kind, weight, version "
        "FROM entity_edges ORDER BY 1, 2, 3",
        "entities": "SELECT type, name FROM entities ORDER BY 1, 2",
        "summaries": "SELECT tenant, project, session_id, level, first_seq, last_seq, content, "
        "method, version, created_ts FROM summaries ORDER BY 1, 2, 3, 4, 5",
        "vectors": "SELECT * FROM capsule_vectors ORDER BY 1, 2, 3",
    }
    return {key: conn.execute(sql_text).fetchall() for key, sql_text in queries.items()}


def test_drain_derives_every_stage_for_every_capsule(capsules):
    _write(capsules)
    report = drain(capsules)
    assert report.done["chunk"] == report.done["extract"] == report.done["link"] == 30
    assert report.done["summarise"] == 1 and not report.failed
    versions = capsules.stage_versions
    for stage in ("chunk", "extract", "link"):
        assert sql.missing_rows(capsules.conn, stage, versions[stage]) == 0
    snapshot = derived_snapshot(capsules.conn)
    fixes = ("file:settings.py", "fixes", "error_type:KeyError")
    assert any(row[1:4] == fixes for row in snapshot["relations"])
    assert snapshot["summaries"], "both sessions and the scope are summarised"
    assert drain(capsules).total_done == 0  # nothing left, nothing redone


def test_rebuild_gives_identical_derived_rows(capsules):
    _write(capsules)
    drain(capsules)
    before = derived_snapshot(capsules.conn)
    assert rebuild(capsules) > 0
    assert all(not rows for key, rows in derived_snapshot(capsules.conn).items())
    drain(capsules)
    assert derived_snapshot(capsules.conn) == before


def test_rebuilding_one_stage_rebuilds_the_stages_that_read_it(capsules):
    _write(capsules, 8)
    drain(capsules)
    before = derived_snapshot(capsules.conn)
    rebuild(capsules, ["extract"])
    emptied = derived_snapshot(capsules.conn)
    assert emptied["mentions"] == emptied["edges"] == [] and emptied["chunks"] == before["chunks"]
    drain(capsules)
    assert derived_snapshot(capsules.conn) == before


def test_an_unknown_stage_is_one_clear_error(capsules):
    with pytest.raises(CapsuleError, match="no pipeline stage named 'nope': use one of chunk"):
        drain(capsules, stages=["nope"])


def test_a_changed_stage_version_enqueues_its_capsules_again(capsules):
    _write(capsules, 4)
    drain(capsules)
    worker = Worker(capsules)
    worker.versions = {**worker.versions, "extract": "changed-version"}
    report = worker.drain(["extract"])
    assert report.enqueued == 4 and report.done["extract"] == 4
    rows = capsules.conn.execute(
        "SELECT DISTINCT version FROM capsule_jobs WHERE stage = 'extract'"
    ).fetchall()
    assert rows == [("changed-version",)]  # the old version's jobs were superseded


def test_a_failing_stage_backs_off_then_succeeds(capsules, monkeypatch):
    _write(capsules, 1)
    from capy.capsules.stages import extract

    real = extract.run
    calls = []

    def flaky(context, n, capsule):
        calls.append(n)
        if len(calls) == 1:
            raise RuntimeError("transient")
        return real(context, n, capsule)

    monkeypatch.setattr(extract, "run", flaky)
    report = drain(capsules, stages=["extract"])
    assert report.failed["extract"] == 1 and report.done["extract"] == 0
    state, error, not_before = capsules.conn.execute(
        "SELECT state, last_error, not_before FROM capsule_jobs WHERE stage = 'extract'"
    ).fetchone()
    assert state == "ready" and error == "RuntimeError: transient" and not_before > time.time()
    capsules.conn.execute("UPDATE capsule_jobs SET not_before = 0 WHERE stage = 'extract'")
    assert drain(capsules, stages=["extract"]).done["extract"] == 1


def test_a_deadline_hands_back_the_jobs_it_did_not_start(capsules):
    _write(capsules, 5)
    report = drain(capsules, deadline=time.monotonic())
    assert report.stopped_by_deadline and report.total_done == 0
    running = capsules.conn.execute(
        "SELECT count(*) FROM capsule_jobs WHERE state = 'running'"
    ).fetchone()[0]
    assert running == 0


SLOW_WORKER = """
import sys, time
from pathlib import Path
from capy.capsules import open_capsules
from capy.capsules.pipeline.worker import Worker
from capy.capsules.stages import chunk
real = chunk.run
def slow(context, n, capsule):
    print("in-job", flush=True)
    time.sleep(60)
chunk.run = slow
with open_capsules(project_dir=Path(sys.argv[1])) as store:
    Worker(store, "doomed", lease_seconds=1).drain(["chunk"])
"""


def test_a_killed_workers_job_is_reclaimed_after_its_lease(capsules, project_dir):
    _write(capsules, 3)
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_WORKER, str(project_dir)],
        stdout=subprocess.PIPE,
        env=os.environ.copy(),
    )
    assert child.stdout is not None and child.stdout.readline().strip() == b"in-job"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    held = capsules.conn.execute(
        "SELECT count(*) FROM capsule_jobs WHERE state = 'running' AND lease_owner = 'doomed'"
    ).fetchone()[0]
    assert held == 3  # killed mid-job, holding its claimed batch
    time.sleep(1.2)
    report = drain(capsules, stages=["chunk"])
    assert report.done["chunk"] == 3
    assert sql.missing_rows(capsules.conn, "chunk", capsules.stage_versions["chunk"]) == 0


def test_forgetting_a_capsule_lowers_the_edges_it_supported(capsules):
    texts = ["settings.py raised KeyError", "settings.py raised KeyError again"]
    appended = capsules.write([CapsuleDraft(kind="note", content=t, source="cli") for t in texts])
    drain(capsules)
    weights = "SELECT kind, weight FROM entity_edges ORDER BY kind"
    assert capsules.conn.execute(weights).fetchall() == [("causes", 2.0), ("co-mention", 2.0)]
    capsules.forget(appended[0].id, "test")
    assert capsules.conn.execute(weights).fetchall() == [("causes", 1.0), ("co-mention", 1.0)]
    capsules.forget(appended[1].id, "test")
    assert capsules.conn.execute(weights).fetchall() == []


def test_a_batch_commits_many_jobs_and_a_failing_one_alone_is_recorded(capsules, monkeypatch):
    _write(capsules, 5)
    from capy.capsules.stages import extract

    real = extract.run
    bad = capsules.conn.execute("SELECT n FROM capsules ORDER BY n LIMIT 1 OFFSET 2").fetchone()[0]

    def failing_third(context, n, capsule):
        if n == bad:
            raise RuntimeError("this one")
        return real(context, n, capsule)

    monkeypatch.setattr(extract, "run", failing_third)
    report = drain(capsules, stages=["extract"])
    assert report.done["extract"] == 4 and report.failed["extract"] == 1
    states = dict(
        capsules.conn.execute(
            "SELECT c.n, j.state FROM capsule_jobs AS j JOIN capsules AS c ON c.id = j.target "
            "WHERE j.stage = 'extract'"
        ).fetchall()
    )
    assert states.pop(bad) == "ready" and set(states.values()) == {"done"}


def test_a_stage_revision_changes_its_version_and_no_other_stages(capsules):
    """The chunk stage's code changed what it derives (its titles name the call) with no pack
    change: its `revision` makes every store's chunks stale, and only the chunk stage's."""
    import copy
    from dataclasses import replace

    from capy.capsules.versions import current_versions

    rules = capsules.rules
    data = copy.deepcopy(rules.packs["capsules"].data)
    chunk = next(stage for stage in data["stages"] if stage["name"] == "chunk")
    assert chunk.get("revision", 1) >= 2  # the titles' change is one revision on
    chunk.pop("revision")
    packs = {**rules.packs, "capsules": replace(rules.packs["capsules"], data=data)}
    before = current_versions(replace(rules, packs=packs, _views={}))
    now = current_versions(rules)
    assert before["chunk"] != now["chunk"]
    assert {k: v for k, v in before.items() if k != "chunk"} == {
        k: v for k, v in now.items() if k != "chunk"
    }
