"""Throughput figures, printed for the record; no timing assertions (machines differ)."""

from __future__ import annotations

import time

import pytest

from capy.chunking import chunk_text

SOURCES = {
    "markdown": "guide.md",
    "json": "incidents.json",
    "log": "service.log",
    "code": "scheduler.py",
    "plaintext": "postmortem.txt",
    "csv": "orders.csv",
    "diff": "change.diff",
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_chunking_one_megabyte(kind, rules, checks, fixture_text, capsys):
    sample = fixture_text(SOURCES[kind])
    if kind == "json":
        # One big document, not a concatenation of documents.
        body = sample.strip()[1:-1]
        text = "{" + ",".join(body.replace('"total_count"', f'"c{n}"', 1) for n in range(36)) + "}"
    else:
        text = (sample + "\n") * (1024 * 1024 // len(sample.encode()) + 1)
    started = time.perf_counter()
    chunks = chunk_text(text, content_type=kind, rules=rules)
    elapsed = time.perf_counter() - started
    checks.well_formed(chunks)
    megabytes = len(text.encode()) / 1024 / 1024
    with capsys.disabled():
        print(
            f"\n  chunking {kind:9} {megabytes:5.2f} MB -> {len(chunks):5} chunks in "
            f"{elapsed * 1000:6.1f} ms ({megabytes / elapsed:6.1f} MB/s)"
        )
