"""`capy bench vault`: generated volume is deterministic and importable; the report holds every
figure (values are not asserted: timings are noisy)."""

from __future__ import annotations

import json

from capy.bench.vault_volume import generate_sessions, main_transcripts, sample_queries
from capy.cli.bench_vault import vault


def test_generated_sessions_are_deterministic_and_distinct(claude_transcripts, tmp_path):
    sources = main_transcripts(claude_transcripts)
    assert sources and not any("subagents" in path.parts for path in sources)
    first = generate_sessions(sources, tmp_path / "one", 12)
    second = generate_sessions(sources, tmp_path / "two", 12)
    assert [path.read_bytes() for path in first] == [path.read_bytes() for path in second]
    assert len({path.name for path in first}) == 12
    assert len({path.read_bytes() for path in first}) == 12  # nothing for dedup to fold
    assert sample_queries(first, 5) == sample_queries(second, 5) != []


def test_bench_vault_reports_every_figure(claude_transcripts, capsys, tmp_path):
    assert vault(runs=1, sessions=12, json_output=True, transcripts=claude_transcripts) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["volume"]["sessions"] == 12
    assert report["reindex"]["sessions"] == 12
    assert report["search"]["queries"] > 0 and report["search"]["p95_ms"] >= 0
    assert report["compression"]["ratio"] > 1
    assert report["compression"]["compacted_bytes"] <= report["compression"]["stored_bytes"]
    assert report["import"]["mb_per_s"] > 0


def test_bench_vault_without_transcripts_says_so(tmp_path, capsys):
    assert vault(runs=1, sessions=1, json_output=True, transcripts=tmp_path / "none") == 0
    assert "no transcripts under" in json.loads(capsys.readouterr().out)["skipped"]
