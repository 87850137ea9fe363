"""Real processes: readers never see a half-indexed source; concurrent writers lose nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from indexing_helpers import block_rowids, expected_vocabulary, vocabulary

from capy.rules import load_rules
from capy.store import open_store
from capy.store.indexing import index_content


def version_text(marker: str, sections: int) -> str:
    """Markdown whose every chunk carries `marker`, with a chunk count set by `sections`."""
    return "".join(
        f"## Section {number} {marker}\n\n{marker} paragraph {number}. "
        + "filler words " * 30
        + "\n\n"
        for number in range(sections)
    )


REINDEXER = """
import sys
from capy.store import open_store
from capy.store.indexing import index_content
from capy.rules import load_rules
sys.path.insert(0, sys.argv[2])
from test_indexing_concurrency import version_text

rules = load_rules()
with open_store() as store:
    for round in range(int(sys.argv[1])):
        marker, sections = ("verA", 6) if round % 2 else ("verB", 11)
        index_content(store, version_text(marker, sections), label="doc.md", rules=rules)
print("done")
"""

READER = """
import json, sys, time
from capy.store import open_store, chunk_rowid_range

deadline = time.time() + float(sys.argv[1])
seen, problems = {}, []
with open_store() as store:
    conn = store.conn
    source_id = conn.execute("SELECT id FROM sources WHERE label = 'doc.md'").fetchone()[0]
    first, last = chunk_rowid_range(source_id)
    while time.time() < deadline:
        conn.execute("BEGIN")  # one snapshot for both tables
        porter = conn.execute(
            "SELECT rowid, content FROM chunks WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (first, last)).fetchall()
        trigram = [row[0] for row in conn.execute(
            "SELECT rowid FROM chunks_trigram WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (first, last))]
        markers = {m for _, content in porter for m in ("verA", "verB") if m in content}
        # The trigram table is an index only: it must find each marker in the same chunks.
        found = {m: [row[0] for row in conn.execute(
            "SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ? "
            "AND rowid BETWEEN ? AND ? ORDER BY rowid", (m, first, last))]
            for m in ("verA", "verB")}
        conn.execute("COMMIT")
        # A trigram row holds a block of 16 chunks (migration 0011).
        holding = {m: sorted({r & ~15 for r, content in porter if m.lower() in content.lower()})
                   for m in ("verA", "verB")}
        if not porter:
            problems.append("no chunks")
        elif len(markers) != 1:
            problems.append(f"mixed chunks {sorted(markers)}")
        elif sorted({rowid & ~15 for rowid, _ in porter}) != trigram or found != holding:
            problems.append("chunks and chunks_trigram differ")
        else:
            seen[markers.pop()] = len(porter)
print(json.dumps({"seen": seen, "problems": problems[:5], "count": len(problems)}))
"""


def test_readers_never_see_a_half_indexed_source(store, project_dir) -> None:
    rules = load_rules(project_dir)  # warms the rules cache the processes share
    index_content(store, version_text("verA", 6), label="doc.md", rules=rules)
    tests_dir = str(__import__("pathlib").Path(__file__).parent)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, "12"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)
    writer = subprocess.run(
        [sys.executable, "-c", REINDEXER, "40", tests_dir],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert writer.returncode == 0, writer.stderr
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err
    report = json.loads(out)
    assert report["count"] == 0, report["problems"]
    assert set(report["seen"]) == {"verA", "verB"}  # the reader did watch the swaps happen
    assert report["seen"]["verA"] != report["seen"]["verB"]


WRITER = """
import sys, time
from capy.store import open_store
from capy.store.indexing import index_content
from capy.rules import load_rules

worker, count, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rules = load_rules()
while time.time() < start:  # every process starts writing at the same moment
    pass
with open_store() as store:
    for number in range(count):
        text = f"worker {worker} note {number}: uniqueword{worker}x{number} and shared words"
        index_content(store, text, label=f"{worker}-{number}", rules=rules)
        index_content(store, f"shared from {worker} round {number}", label="shared", rules=rules)
print("done")
"""


def test_concurrent_writers_lose_nothing(project_dir) -> None:
    load_rules(project_dir)
    workers, per_worker = 4, 15
    start = str(time.time() + 2.0)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{worker}", str(per_worker), start],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(workers)
    ]
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert out.strip() == "done"
    with open_store(project_dir) as store:
        conn = store.conn
        labels = {row[0] for row in conn.execute("SELECT label FROM sources")}
        assert labels == {f"w{w}-{n}" for w in range(workers) for n in range(per_worker)} | {
            "shared"
        }
        # Every source has its chunks, in both tables, and nothing else is there.
        porter = conn.execute("SELECT rowid, source_id FROM chunks ORDER BY rowid").fetchall()
        trigram = conn.execute("SELECT rowid FROM chunks_trigram ORDER BY rowid").fetchall()
        assert [(rowid,) for rowid in block_rowids(rowid for rowid, _ in porter)] == trigram
        assert {source for _, source in porter} == {
            row[0] for row in conn.execute("SELECT id FROM sources")
        }
        for w in range(workers):
            for n in range(per_worker):
                hit = conn.execute(
                    "SELECT count(*) FROM chunks WHERE chunks MATCH ?", (f"uniquewordw{w}x{n}",)
                ).fetchone()
                assert hit == (1,)
        assert vocabulary(store) == expected_vocabulary(store)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
