"""`capy bench niah`: the scenario fixtures, and the benchmark end to end on two of them.

Figures are checked for shape and sense, never for speed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capy.bench.niah import NiahFixtureError, load_scenarios, niah_tables, run_niah
from capy.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
NIAH = REPO_ROOT / "fixtures" / "bench" / "niah"
SMALL = ("pip-list", "cargo-test")  # the two smallest outputs keep the run short


def index_lines() -> dict[str, dict]:
    lines = (NIAH / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    return {entry["id"]: entry for entry in map(json.loads, lines)}


@pytest.fixture
def two_scenarios(tmp_path: Path) -> Path:
    """The two smallest shipped scenarios, copied with their index lines."""
    folder = tmp_path / "niah"
    (folder / "outputs").mkdir(parents=True)
    entries = index_lines()
    lines = []
    for scenario_id in SMALL:
        entry = entries[scenario_id]
        shutil.copy(NIAH / entry["file"], folder / entry["file"])
        lines.append(json.dumps(entry))
    (folder / "scenarios.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_shipped_scenarios_are_well_formed() -> None:
    scenarios = load_scenarios(NIAH)
    assert len(scenarios) >= 20
    assert len({scenario.id for scenario in scenarios}) == len(scenarios)
    sizes = [scenario.path.stat().st_size for scenario in scenarios]
    assert all(10_000 <= size <= 500_000 for size in sizes)
    assert sum(size > 20_000 for size in sizes) >= len(sizes) * 3 // 4
    assert sum(sizes) < 3_000_000
    for scenario in scenarios:
        text = scenario.path.read_text(encoding="utf-8")
        assert 1 <= len(scenario.cases) <= 3
        for case in scenario.cases:
            assert case.query.strip() and case.needles
            assert [needle for needle in case.needles if needle not in text] == []
    assert len({scenario.tool for scenario in scenarios}) >= 15


def test_committed_outputs_match_their_generator(tmp_path: Path) -> None:
    generator = NIAH / "tools" / "generate.py"
    check = subprocess.run(
        [sys.executable, str(generator), "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert check.returncode == 0, (
        check.stderr + "\nrun: python fixtures/bench/niah/tools/generate.py"
    )


@pytest.mark.parametrize(
    ("index", "needle"),
    [
        ("", "lists no scenarios"),
        ("{not json\n", "not a scenario"),
        ('{"id": "a", "tool": "t", "command": "c", "file": "missing.txt", '
         '"cases": [{"case_id": "a-01", "query": "q", "needles": ["n"]}]}\n', "is missing"),
        ('{"id": "a", "tool": "t", "command": "c", "file": "x.txt", "cases": []}\n',
         "cases with a query and needles"),
    ],
)  # fmt: skip
def test_bad_scenario_files_are_one_clear_sentence(tmp_path: Path, index: str, needle: str):
    (tmp_path / "x.txt").write_text("output\n", encoding="utf-8")
    (tmp_path / "scenarios.jsonl").write_text(index, encoding="utf-8")
    with pytest.raises(NiahFixtureError) as caught:
        load_scenarios(tmp_path)
    assert needle in caught.value.message
    assert "\n" not in caught.value.message


def test_missing_folder_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(NiahFixtureError, match="pass --scenarios"):
        load_scenarios(tmp_path / "nowhere")


def test_bench_on_two_scenarios_reports_sane_figures(two_scenarios: Path) -> None:
    home = os.environ["HOME"]
    report = run_niah(load_scenarios(two_scenarios))
    assert os.environ["HOME"] == home  # the throwaway HOME is gone again
    assert report["scenarios"] == 2
    cases = report["cases"]
    assert (
        len(cases)
        == report["questions"]
        == sum(len(entry["cases"]) for entry in index_lines().values() if entry["id"] in SMALL)
    )
    for case in cases:
        assert case["tool_error"] is False
        assert (
            case["produced_bytes"]
            == (two_scenarios / "outputs")
            .joinpath(index_lines()[case["scenario"]]["file"].split("/")[-1])
            .stat()
            .st_size
        )
        assert 0 < case["returned_bytes"] < case["produced_bytes"]
        assert 0.0 < case["kept_out"] < 1.0
        assert 0 <= case["found"] <= case["needles"]
        assert len(case["missed"]) == case["needles"] - case["found"]
    overall = report["overall"]
    assert overall["produced_bytes"] == sum(case["produced_bytes"] for case in cases)
    assert overall["returned_bytes"] == sum(case["returned_bytes"] for case in cases)
    assert 0.5 < overall["kept_out"] < 1.0 and 0.0 <= overall["recall"] <= 1.0
    assert [goal["goal"] for goal in report["goals"]] == [
        "bytes kept out >= 95%",
        "needle recall >= 0.98",
        "scenarios >= 20",
    ]
    assert report["goals"][2] == {"goal": "scenarios >= 20", "value": 2, "met": False}
    titles = [table.title for table in niah_tables(report)]
    assert titles[0].startswith("context reduction: 2 scenarios")
    assert "context-reduction goals" in titles


def test_cli_prints_json_and_writes_markdown(two_scenarios: Path, tmp_path: Path, capsys):
    markdown = tmp_path / "niah.md"
    code = main(
        ["bench", "niah", "--json", "--scenarios", str(two_scenarios), "--markdown", str(markdown)]
    )
    out, err = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert [row["scenario"] for row in report["per_scenario"]] == list(SMALL)
    text = markdown.read_text(encoding="utf-8")
    assert "### context reduction: 2 scenarios" in text and "| pip-list |" in text
    assert f"wrote {markdown}" in err


def test_cli_bad_folder_is_exit_2_with_one_line(tmp_path: Path, capsys) -> None:
    code = main(["bench", "niah", "--scenarios", str(tmp_path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "scenarios.jsonl" in err and "Traceback" not in err
