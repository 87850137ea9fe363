"""`capy bench niah --set real`: the real-output set's shape and split, and a tiny slice run.

Figures are checked for shape and sense, never for their level: the set measures capy, and a
test that pinned its figures would invite tuning to it.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from capy.bench.niah_real import real_tables, run_real
from capy.bench.niah_real_set import (
    HALVES,
    OUTPUTS_FOLDER,
    SET_FILE,
    RealSet,
    RealSetError,
    assign_halves,
    load_real_set,
)
from capy.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]
REAL = REPO_ROOT / "fixtures" / "niah-real"


@pytest.fixture(scope="module")
def real_set() -> RealSet:
    return load_real_set(REAL)


def test_set_has_the_size_the_issue_asks_for(real_set: RealSet) -> None:
    outputs = real_set.outputs
    intents = [intent for output in outputs for intent in output.intents]
    assert len(outputs) >= 60
    assert len({output.file for output in outputs}) == len(outputs)
    assert len({output.tool for output in outputs}) >= 15
    assert sum(intent.kind == "positive" for intent in intents) >= 200
    assert sum(intent.kind == "negative" for intent in intents) >= 50
    shapes = Counter(intent.shape for intent in intents if intent.kind == "positive")
    assert shapes["deep"] >= 20 and shapes["multi"] >= 15 and shapes["comparison"] >= 20
    sizes = [output.path.stat().st_size for output in outputs]
    assert sum(sizes) < 8_000_000
    assert sum(5_000 <= size <= 200_000 for size in sizes) > len(sizes) // 2
    listed = {path.name for path in (REAL / OUTPUTS_FOLDER).iterdir()}
    assert listed == {output.file for output in outputs}  # no stray, unasked-about output


def test_positive_needles_occur_verbatim_and_negative_ones_do_not(real_set: RealSet) -> None:
    wrong = []
    for output in real_set.outputs:
        text = output.path.read_text(encoding="utf-8")
        for intent in output.intents:
            for needle in intent.needles:
                if (needle in text) != (intent.kind == "positive"):
                    wrong.append((intent.intent_id, intent.kind, needle))
    assert wrong == []


def test_halves_are_the_seeded_split_and_balanced_by_tool(real_set: RealSet) -> None:
    outputs = [output for output in real_set.outputs if not output.added and not output.batch]
    expected = assign_halves([(output.file, output.tool) for output in outputs], real_set.seed)
    assert {output.file: output.half for output in outputs} == expected
    per_half = Counter(output.half for output in outputs)
    assert abs(per_half["dev"] - per_half["held"]) <= 1
    for tool in {output.tool for output in outputs}:
        mine = Counter(output.half for output in outputs if output.tool == tool)
        assert abs(mine["dev"] - mine["held"]) <= 1, tool
    for half in HALVES:
        intents = [i for o in outputs if o.half == half for i in o.intents]
        assert sum(intent.kind == "positive" for intent in intents) >= 90
        assert sum(intent.kind == "negative" for intent in intents) >= 20


def test_dev_additions_join_the_dev_half_outside_the_split(real_set: RealSet) -> None:
    added = [output for output in real_set.outputs if output.added]
    assert added and all(output.half == "dev" for output in added)
    assert not {output.file for output in added} & {
        output.file for output in real_set.outputs if not output.added
    }


def test_each_later_batch_is_split_by_the_same_rule_over_itself_alone(real_set: RealSet) -> None:
    seeds = {output.batch for output in real_set.outputs if output.batch}
    assert seeds and real_set.seed not in seeds
    for seed in seeds:
        batch = [output for output in real_set.outputs if output.batch == seed]
        expected = assign_halves([(output.file, output.tool) for output in batch], seed)
        assert {output.file: output.half for output in batch} == expected
        assert not any(output.added for output in batch)
        per_half = Counter(output.half for output in batch)
        assert abs(per_half["dev"] - per_half["held"]) <= 1
    files = [output.file for output in real_set.outputs]
    assert len(files) == len(set(files))


def test_every_output_has_its_origin_and_license_in_sources(real_set: RealSet) -> None:
    sources = (REAL / "SOURCES.md").read_text(encoding="utf-8")
    for output in real_set.outputs:
        assert f"`{output.file}`" in sources
        assert output.origin.strip() and output.license.strip()


def test_what_secret_detectors_flag_is_visibly_fake(real_set: RealSet) -> None:
    from capy.security.redaction import shipped_secrets_view

    secrets = shipped_secrets_view()
    real = []
    for output in real_set.outputs:
        text = output.path.read_text(encoding="utf-8")
        for finding in secrets.find_secrets(text):
            if "FAKE" not in text[finding.start : finding.end]:
                real.append((output.file, finding.rule_id))
    assert real == []


def test_assign_halves_ignores_order_and_depends_on_the_seed() -> None:
    files = [(f"out-{n}.txt", f"tool-{n % 4}") for n in range(17)]
    first = assign_halves(files, "seed-a")
    assert assign_halves(list(reversed(files)), "seed-a") == first
    assert Counter(first.values())["dev"] in (8, 9)
    assert any(assign_halves(files, f"seed-{n}") != first for n in range(5))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("outputs: []\nsplit: {seed: s}\n", "lists no outputs"),
        ("split: {seed: s}\noutputs:\n  - file: x.txt\n", "not an output"),
        ("split: {seed: s}\n", "a list of `outputs`"),
        ("outputs: [{file: x.txt}]\n", "`split.seed` is missing"),
        ("split: {seed: s}\noutputs:\n  - {file: x.txt, tool: t, command: c, origin: o, "
         "license: l, half: both, intents: [{kind: positive, intent: q, needles: [n]}]}\n",
         "half must be one of dev, held"),
        ("split: {seed: s}\noutputs:\n  - {file: gone.txt, tool: t, command: c, origin: o, "
         "license: l, half: dev, intents: [{kind: positive, intent: q, needles: [n]}]}\n",
         "is missing"),
        ("split: {seed: s}\noutputs:\n  - {file: x.txt, tool: t, command: c, origin: o, "
         "license: l, half: dev, intents: [{kind: maybe, intent: q, needles: [n]}]}\n",
         "not positive or negative"),
        ("split: {seed: s}\noutputs:\n  - {file: x.txt, tool: t, command: c, origin: o, "
         "license: l, half: dev, intents: [{kind: positive, intent: q, needles: [n]}]}\n"
         "batches:\n  - {outputs: []}\n", "needs a `seed`"),
    ],
)  # fmt: skip
def test_bad_set_files_are_one_clear_sentence(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / OUTPUTS_FOLDER).mkdir()
    (tmp_path / OUTPUTS_FOLDER / "x.txt").write_text("output\n", encoding="utf-8")
    (tmp_path / SET_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(RealSetError) as caught:
        load_real_set(tmp_path)
    assert needle in caught.value.message
    assert "\n" not in caught.value.message


def _slice(real_set: RealSet) -> RealSet:
    """The smallest output above the intent threshold from each half, so both halves and
    the intent path run; plus one below it, which comes back whole."""
    chosen = []
    for half in HALVES:
        mine = [o for o in real_set.outputs if o.half == half and o.path.stat().st_size > 5_000]
        chosen.append(min(mine, key=lambda output: output.path.stat().st_size))
    small = [o for o in real_set.outputs if o.path.stat().st_size < 1_000]
    chosen.append(min(small, key=lambda output: output.path.stat().st_size))
    return replace(real_set, outputs=tuple(chosen))


def test_bench_on_a_slice_reports_both_halves_in_one_and_two_steps(real_set: RealSet) -> None:
    sliced = _slice(real_set)
    report = run_real(sliced)
    cases = report["cases"]
    assert len(cases) == sum(len(output.intents) for output in sliced.outputs)
    assert set(report["halves"]) == set(HALVES)
    for case in cases:
        assert case["tool_error"] is False
        assert case["returned_bytes"] > 0 and case["search_bytes"] > 0
        assert 0 <= case["found_one_step"] <= case["found_two_steps"] <= case["needles"]
        if case["above_threshold"]:
            assert case["returned_bytes"] < case["produced_bytes"]
    for half in HALVES:
        totals = report["halves"][half]
        assert totals["outputs"] >= 1 and totals["positive"] >= 1
        assert 0.0 <= totals["recall_one_step"] <= totals["recall_two_steps"] <= 1.0
        assert totals["two_step_bytes"] >= totals["returned_bytes"]
    overall = report["overall"]
    assert overall["positive"] == sum(report["halves"][h]["positive"] for h in HALVES)
    assert overall["produced_bytes"] == sum(
        case["produced_bytes"] for case in cases if case["kind"] == "positive"
    )
    assert 0.0 < overall["kept_out_above"] < 1.0
    assert [goal["goal"].split()[0] for goal in report["goals"]] == [
        "one-step", "kept", "kept", "two-step", "negative", "halves",
    ]  # fmt: skip
    titles = [table.title for table in real_tables(report)]
    assert titles[0].startswith(f"real-output needles: {len(sliced.outputs)} outputs")


def test_cli_runs_the_real_set_from_a_folder_and_one_half(
    real_set: RealSet, tmp_path: Path, capsys
) -> None:
    output = min(
        (o for o in real_set.outputs if o.half == "dev"), key=lambda o: o.path.stat().st_size
    )
    (tmp_path / OUTPUTS_FOLDER).mkdir()
    shutil.copy(output.path, tmp_path / OUTPUTS_FOLDER / output.file)
    entry = {
        "file": output.file, "tool": output.tool, "command": output.command,
        "origin": output.origin, "license": output.license, "half": "held",
        "intents": [{"kind": i.kind, "intent": i.intent, "needles": list(i.needles)}
                    for i in output.intents],
    }  # fmt: skip
    (tmp_path / SET_FILE).write_text(
        json.dumps({"split": {"seed": "s"}, "outputs": [entry]}), encoding="utf-8"
    )
    code = main(["bench", "niah", "--set", "real", "--json", "--scenarios", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)
    assert report["set"] == "real" and report["halves"]["held"]["outputs"] == 1
    code = main(["bench", "niah", "--set", "real", "--half", "dev", "--json",
                 "--scenarios", str(tmp_path)])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0 and json.loads(out)["overall"]["outputs"] == 0


def test_cli_bad_real_folder_is_exit_2_with_one_line(tmp_path: Path, capsys) -> None:
    code = main(["bench", "niah", "--set", "real", "--scenarios", str(tmp_path)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert "set.yaml" in err and "Traceback" not in err
