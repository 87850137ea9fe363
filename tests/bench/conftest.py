"""Small handmade benchmark inputs, written into each test's temp directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTES = """# Deploy notes

## Database
The primary database is postgres 15, listening on port 5433. Backups run nightly at 02:30 UTC
and are kept for fourteen days in the cold bucket.

## Cache
Redis holds web sessions for 30 minutes; the eviction policy is allkeys-lru so that a full
cache drops the least recently used keys first.

## Queue
Background jobs go through rabbitmq with a prefetch of 16 messages per worker, and a dead
letter exchange named jobs.dlx catches whatever fails three times.
"""

BUILD_LOG = "\n".join(
    [f"[12:00:{i:02d}] compiling module part{i}.c" for i in range(1, 30)]
    + [
        "[12:00:31] linking target widgetd",
        "[12:00:32] error: undefined reference to `frobnicate_widget'",
        "[12:00:32] collect2: error: ld returned 1 exit status",
        "[12:00:33] make: *** [Makefile:42: widgetd] Error 1",
    ]
)


def entry(haystack_id: str, content_type: str, text: str, cases: list[dict], **extra) -> dict:
    data = {
        "id": haystack_id,
        "content_type": content_type,
        "haystack": text,
        "source_label": extra.get("label", f"label of {haystack_id}"),
        "source_kind": extra.get("kind", "ephemeral"),
        "cases": cases,
    }
    return data


def case(case_id: str, query: str, needles: list[str], ceiling: int = 1) -> dict:
    return {
        "case_id": case_id,
        "query": query,
        "needles": needles,
        "expected_rank_ceiling": ceiling,
    }


def two_haystacks() -> list[dict]:
    notes = entry(
        "md-notes",
        "markdown",
        NOTES,
        [
            case("md-notes-01", "which port does postgres listen on", ["port 5433"]),
            case("md-notes-02", "redis eviction policy", ["allkeys-lru"]),
            case("md-notes-03", "rabbitmq prefetch per worker", ["prefetch of 16"], 2),
            case("md-notes-04", "kubernetes helm chart values", [], 10),
        ],
        label="notes/deploy.md",
        kind="durable",
    )
    build = entry(
        "log-build",
        "log",
        BUILD_LOG,
        [
            case("log-build-01", "undefined reference frobnicate_widget", ["`frobnicate_widget'"]),
            case("log-build-02", "zeppelin quartz lemonade", [], 10),
        ],
        label="make build",
    )
    return [notes, build]


@pytest.fixture
def make_entry():
    return entry


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    """Two haystacks in two files (a.jsonl, b.jsonl), as `capy bench quality --fixtures` reads."""
    directory = tmp_path / "fixtures"
    directory.mkdir()
    for name, data in zip(("a", "b"), two_haystacks(), strict=True):
        (directory / f"{name}.jsonl").write_text(json.dumps(data) + "\n", encoding="utf-8")
    return directory


TREC_DOCS = """<DOC>
<DOCNO>d1</DOCNO>
the microwave measurement of dielectric constants of liquids
</DOC>
<DOC>
<DOCNO>d2</DOCNO>
<TEXT>waveguide design for microwave radiation</TEXT>
</DOC>
<DOC>
<DOCNO>d3</DOCNO>
digital computers in filter design with phase characteristics
</DOC>
<DOC>
<DOCNO>d4</DOCNO>
data coding systems for information transfer over noisy channels
</DOC>
<DOC>
<DOCNO>d5</DOCNO>
transistor amplifier noise at low temperatures
</DOC>
"""

TREC_TOPICS = """<top>
<num>1</num><title>
MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS
</title>
</top>
<top>
<num> Number: 2
<title> Topic: WAVEGUIDE MICROWAVE DESIGN

<desc> Description:
classic TREC layout, title ended by the next tag
</top>
<top>
<num>3</num><title>
DATA CODING FOR INFORMATION TRANSFER
</title>
</top>
"""

TREC_QRELS = """1 0 d1 1
2 0 d2 1
2 0 d3 1
2 0 d5 0
3 0 d4 1
"""


@pytest.fixture
def trec_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "tiny-trec"
    directory.mkdir()
    (directory / "doc-text.trec").write_text(TREC_DOCS, encoding="utf-8")
    (directory / "query-text.trec").write_text(TREC_TOPICS, encoding="utf-8")
    (directory / "qrels").write_text(TREC_QRELS, encoding="utf-8")
    return directory
