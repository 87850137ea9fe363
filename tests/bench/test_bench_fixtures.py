"""The quality fixture format: what parses, what is refused (with file and line), and the
shipped fixture files themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capy.bench.fixtures import (
    FixtureError,
    load_fixtures,
    load_typo_ids,
    parse_haystack,
)

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "fixtures" / "bench" / "quality"


def test_parse_positive_and_negative_cases(make_entry) -> None:
    entry = make_entry(
        "h1",
        "log",
        "line one\nline two",
        [
            {
                "case_id": "h1-01",
                "query": "two",
                "needles": ["line two"],
                "expected_rank_ceiling": 2,
            },
            {"case_id": "h1-02", "query": "zebra", "needles": [], "expected_rank_ceiling": 10},
        ],
    )
    haystack = parse_haystack(entry)
    assert (haystack.id, haystack.content_type, haystack.source_kind) == ("h1", "log", "ephemeral")
    positive, negative = haystack.cases
    assert positive.needles == ("line two",) and positive.ceiling == 2 and not positive.negative
    assert negative.negative


@pytest.mark.parametrize(
    ("fixture_type", "index_type"),
    [("markdown", "markdown"), ("json", "json"), ("log", "log"), ("code", "code"),
     ("plaintext", "plaintext"), ("transcript", "transcript"), ("csv-ish", "auto")],
)  # fmt: skip
def test_content_types_map_to_the_chunker_or_auto(
    make_entry, fixture_type: str, index_type: str
) -> None:
    entry = make_entry("h", fixture_type, "text", [])
    entry["cases"] = [{"case_id": "c", "query": "q", "needles": [], "expected_rank_ceiling": 1}]
    assert parse_haystack(entry).index_content_type == index_type


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"source_kind": "forever"}, "source_kind 'forever' is not one of durable, ephemeral"),
        ({"haystack": ""}, "'haystack' must be a non-empty string"),
        ({"cases": []}, "'cases' must be a non-empty list"),
        ({"cases": [{"case_id": "c", "query": "q", "needles": "x"}]}, "'needles' must be a list"),
        (
            {"cases": [{"case_id": "c", "query": "q", "needles": [], "expected_rank_ceiling": 0}]},
            "'expected_rank_ceiling' must be a positive integer",
        ),
        ({"cases": [{"query": "q", "needles": []}]}, "case 0: 'case_id' must be a non-empty"),
    ],
)
def test_malformed_entries_are_named(make_entry, change: dict, message: str) -> None:
    entry = make_entry("h", "json", "{}", [{"case_id": "c", "query": "q", "needles": []}])
    entry.update(change)
    with pytest.raises(FixtureError, match=r"^here: ") as caught:
        parse_haystack(entry, "here")
    assert message in caught.value.message


def test_files_are_read_in_order_and_errors_carry_file_and_line(fixture_dir: Path) -> None:
    haystacks = load_fixtures(fixture_dir)
    assert [h.id for h in haystacks] == ["md-notes", "log-build"]
    assert [len(h.cases) for h in haystacks] == [4, 2]
    (fixture_dir / "z-broken.jsonl").write_text("\n{not json\n", encoding="utf-8")
    with pytest.raises(FixtureError, match=r"z-broken\.jsonl:2: not valid JSON"):
        load_fixtures(fixture_dir)


def test_duplicate_sources_and_case_ids_are_refused(fixture_dir: Path) -> None:
    first = (fixture_dir / "a.jsonl").read_text(encoding="utf-8")
    (fixture_dir / "c.jsonl").write_text(first, encoding="utf-8")
    with pytest.raises(FixtureError, match="is used twice"):
        load_fixtures(fixture_dir)
    data = json.loads(first)
    data["source_label"] = "another label"
    (fixture_dir / "c.jsonl").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FixtureError, match="case id 'md-notes-01' appears twice"):
        load_fixtures(fixture_dir)


def test_missing_or_empty_directories(tmp_path: Path) -> None:
    with pytest.raises(FixtureError, match="no fixture directory"):
        load_fixtures(tmp_path / "absent")
    with pytest.raises(FixtureError, match=r"no \*\.jsonl fixture files"):
        load_fixtures(tmp_path)


def test_typo_list(tmp_path: Path) -> None:
    assert load_typo_ids(tmp_path) == frozenset()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "typo_cases.txt").write_text("log.jsonl:log-a-03\n\n", encoding="utf-8")
    assert load_typo_ids(tmp_path) == {"log-a-03"}


def test_the_shipped_fixtures_parse() -> None:
    if not SHIPPED.is_dir():
        pytest.skip("the repository's fixtures/bench/quality is not present")
    haystacks = load_fixtures(SHIPPED)
    cases = [case for haystack in haystacks for case in haystack.cases]
    assert sum(not case.negative for case in cases) >= 250
    assert sum(case.negative for case in cases) >= 60
    typo = load_typo_ids(SHIPPED)
    assert typo and typo <= {case.case_id for case in cases}
    for haystack in haystacks:  # needles are verbatim text of their haystack
        for case in haystack.cases:
            assert all(needle in haystack.text for needle in case.needles), case.case_id
