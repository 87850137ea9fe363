"""The bounded background worker a long-lived process runs (capy serve), on a real log."""

from __future__ import annotations

import time

from capy.capsules import CapsuleDraft
from capy.capsules.pipeline.background import BackgroundPipeline


def test_the_background_worker_drains_and_stops_cleanly(capsules, project_dir):
    capsules.write(
        [CapsuleDraft(kind="note", content=f"ran pytest {i}", source="cli") for i in range(5)]
    )
    pipeline = BackgroundPipeline(project_dir, first_round_after=0).start()
    try:
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and pipeline.jobs_done < 5 * 4:
            time.sleep(0.1)
    finally:
        started = time.monotonic()
        pipeline.stop()
    assert time.monotonic() - started < 6 and not pipeline._thread.is_alive()
    done = capsules.conn.execute(
        "SELECT count(*) FROM capsule_jobs WHERE state = 'done' AND stage = 'chunk'"
    ).fetchone()[0]
    assert done == 5


def test_without_a_capsule_log_nothing_is_created(project_dir):
    from capy.capsules.location import locate_capsules

    pipeline = BackgroundPipeline(project_dir, first_round_after=0).start()
    time.sleep(1.0)
    pipeline.stop()
    assert not locate_capsules(None, project_dir).path.exists()
    assert not pipeline._thread.is_alive()
