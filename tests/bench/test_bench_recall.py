"""`capy bench recall` end to end on a tiny LoCoMo-shaped file: import, drain, recall, score
beside the bm25 floor, and the rebuild check, in seconds."""

from __future__ import annotations

import json

from capy.bench.recall import run, tables
from capy.bench.recall_checks import check_tables, rebuild_check
from capy.bench.recall_scoring import score

TURNS = [
    ("Ann", "I adopted a grey cat called Pixel last week."),
    ("Ben", "Lovely! I started learning the cello in March."),
    ("Ann", "Pixel keeps knocking my plants off the shelf."),
    ("Ben", "My cello teacher says I should practise scales daily."),
]


def _locomo(tmp_path, conversation: str):
    sample = {
        "sample_id": conversation,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": who, "dia_id": f"D1:{n}", "text": text}
                for n, (who, text) in enumerate(TURNS, 1)
            ],
        },
        "qa": [
            {"question": "What is the name of Ann's cat?", "evidence": ["D1:1"], "category": 4},
            {"question": "Which instrument is Ben learning?", "evidence": ["D1:2"], "category": 1},
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), "utf-8")
    return path


def test_the_bench_scores_recall_beside_the_floor_and_rebuilds_identically(tmp_path):
    path = _locomo(tmp_path, "conv-26")  # a dev conversation
    report = run(path, None, budget=300, halves=("dev",))
    rows = report["sets"]["locomo"]["rows"]
    total = next(row for row in rows if row["category"] == "all")
    assert total["capy"]["questions"] == 2
    assert total["capy"]["r@5"] == 1.0 and total["floor"]["r@5"] == 1.0
    assert total["capy"]["tokens"] <= 300
    assert report["goals"][0]["met"] is True
    rebuilt = rebuild_check(path, budget=300)
    assert rebuilt["identical"] == rebuilt["queries"] == 2
    report["rebuild"] = rebuilt
    titles = [table.title for table in tables(report) + check_tables(report)]
    assert any(title.startswith("recall on locomo.json") for title in titles)


def test_evidence_recall_counts_the_share_found_within_k():
    scored = score("dev", "x", ["a", "b"], [{"z"}, {"a"}, set(), set(), set(), {"b"}])
    assert scored.hits_at == {5: 0.5, 10: 1.0}
    assert scored.reciprocal_rank == 0.5


def test_the_scale_check_builds_the_size_asked_and_times_recall_over_it(tmp_path):
    from capy.bench.recall_scale import scale_check

    path = _locomo(tmp_path, "conv-26")
    scale = scale_check(40, path)
    assert scale["capsules"] == 40 and scale["queries"] == 2
    assert scale["stages"][0] == "chunk"  # embed too only when recall reads vectors
    assert 0 < scale["p50_ms"] <= scale["p95_ms"]
    assert None not in (scale["queued_p95_ms"], scale["slept_p95_ms"], scale["unqueued_p95_ms"])
    table = check_tables({"rebuild": {"skipped": "not asked"}, "scale": scale})[-1]
    assert table.title.startswith("recall at scale (40 capsules")


def test_the_scale_timing_tells_a_threads_cpu_from_its_wait_for_one_and_its_sleep():
    """Wall time beyond CPU time is either the run queue of a busy machine or sleep (disk,
    locks, another thread): the kernel's per-thread schedstat tells them apart."""
    import time

    from capy.bench.recall_scale import _thread_schedule

    before = _thread_schedule()
    assert before is not None, "Linux keeps /proc/thread-self/schedstat"
    started = time.thread_time()
    while time.thread_time() - started < 0.02:
        pass
    spun = _thread_schedule()
    asleep_from = time.monotonic()
    time.sleep(0.3)
    slept = _thread_schedule()
    wall_ms = (time.monotonic() - asleep_from) * 1000
    assert spun is not None and slept is not None
    assert spun[0] - before[0] >= 19  # ms on a CPU: the 20 ms spun
    assert slept[0] - spun[0] < 10  # asleep, the thread neither ran
    # nor waited in the run queue while asleep: only the wait after waking (long on a loaded
    # machine, so bounded by the wall time past the sleep, never by a fixed figure) counts
    assert slept[1] - spun[1] <= wall_ms - 300 + 5


def test_the_scale_log_is_reused_from_the_cache_while_nothing_that_shapes_it_changed(
    tmp_path, monkeypatch
):
    from capy.bench.recall_scale import scale_check

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = _locomo(tmp_path, "conv-26")
    built = scale_check(40, path, reuse=True)
    again = scale_check(40, path, reuse=True)
    assert built["reused"] is False and again["reused"] is True
    assert again["jobs"] == built["jobs"] and again["queries"] == built["queries"]
    assert again["cpu_p95_ms"] is not None
    folders = list((tmp_path / "cache" / "capy-bench" / "recall-scale").iterdir())
    assert len(folders) == 1 and (folders[0] / "done.json").is_file()
    assert (folders[0] / "key").stat().st_mode & 0o777 == 0o600
    bigger = scale_check(41, path, reuse=True)  # another size is another log
    assert bigger["reused"] is False
    table = check_tables({"scale": again})[-1]
    assert any("reused from the cache" in note for note in table.notes)
