"""LoCoMo as TREC collections, and the ablation of search-pack settings, on small handmade data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capy.bench import ablate, ir_locomo
from capy.bench.trec_format import load_collection
from capy.rules import load_rules

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "testdata" / "locomo"


def _conversation(cid: str) -> dict:
    return {
        "sample_id": cid,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:00 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a <grey> kitten today."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! What is her name?"},
            ],
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_2": [
                {
                    "speaker": "Ann",
                    "dia_id": "D2:1",
                    "text": "Her name is Pickle.",
                    "blip_caption": "a photo of a cat",
                }
            ],
        },
        "session_summary": {"session_2_summary": "Ann tells Bo that the kitten is named Pickle."},
        "qa": [
            {"question": "What is the kitten called?", "evidence": ["D2:1"], "category": 1},
            {"question": "When was the kitten adopted?", "evidence": ["D1:1; D1:2"]},
            {"question": "Unanswerable?", "evidence": []},
        ],
    }


def test_halves_are_fixed_by_conversation_id() -> None:
    assert {ir_locomo.half_of(f"conv-{n}") for n in range(20)} == {"dev", "held"}
    assert ir_locomo.half_of("conv-26") == ir_locomo.half_of("conv-26")


def test_turns_and_sessions_judged_by_evidence(tmp_path: Path) -> None:
    cid = next(f"c{n}" for n in range(50) if ir_locomo.half_of(f"c{n}") == "dev")
    built = {c.name: c for c in ir_locomo.collections([_conversation(cid)])}
    assert set(built) == {"locomo-turns-dev", "locomo-sessions-dev", "locomo-summaries-dev"}
    turns = built["locomo-turns-dev"]
    assert [d.docno for d in turns.documents] == [f"{cid}:D1:1", f"{cid}:D1:2", f"{cid}:D2:1"]
    assert turns.documents[2].text == "Ann: Her name is Pickle. [shares a photo of a cat]"
    assert turns.qrels == {
        f"{cid}:q0": {f"{cid}:D2:1"},
        f"{cid}:q1": {f"{cid}:D1:1", f"{cid}:D1:2"},
    }
    sessions = built["locomo-sessions-dev"]
    assert sessions.documents[0].text.splitlines()[0] == "1:00 pm on 8 May, 2023"
    assert sessions.qrels[f"{cid}:q1"] == {f"{cid}:S1"}
    summaries = built["locomo-summaries-dev"]
    assert summaries.documents == turns.documents
    assert [(t.id, t.text) for t in summaries.topics] == [
        (f"{cid}:s2", "Ann tells Bo that the kitten is named Pickle.")
    ]
    assert summaries.qrels == {f"{cid}:s2": {f"{cid}:D2:1"}}
    # Written and read back in the TREC layout, angle brackets kept as look-alikes.
    again = load_collection(ir_locomo.write_collection(turns, tmp_path))
    assert again.qrels == turns.qrels
    assert [t.text for t in again.topics] == [t.text for t in turns.topics]
    assert "‹grey›" in again.documents[0].text


def test_ablated_pack_changes_one_setting_and_its_cached_values() -> None:
    pack = load_rules().view("search")
    assert pack.stopwords.all and pack.synonyms.expansions  # computed, cached on the view
    quiet = ablate.ablated(pack, ablate.Ablation("stopwords.english", ()))
    assert not set(pack.stopwords.english) & quiet.stopwords.all
    assert not ablate.ablated(pack, ablate.Ablation("synonyms.groups", ())).synonyms.expansions
    flat = ablate.ablated(pack, ablate.Ablation("boosts.phrase.weight", 0.0))
    assert flat.boosts.phrase.weight == 0.0
    assert flat.boosts.phrase.gap_chars == pack.boosts.phrase.gap_chars
    assert pack.boosts.phrase.weight > 0  # the shipped view is untouched
    assert set(ablate.known_settings(pack)) == {a.setting for a in ablate.ABLATIONS}


def test_ablation_report_on_a_small_collection(trec_dir: Path) -> None:
    collection = load_collection(trec_dir)
    report = ablate.run_ablation([collection], only=["boosts.proximity", "query.max_terms"])
    (row,) = report["collections"]
    assert row["collection"] == "tiny-trec"
    names = [run["setting"] for run in row["runs"]]
    assert names == [ablate.FULL, "query.max_terms", "boosts.proximity"]
    assert 0 < row["floor"] <= 1 and 0 < row["full"] <= 1
    assert ablate.tables(report)[0].rows[0][0] == ablate.FLOOR


def test_cli_ablate_and_ir_build(trec_dir: Path, tmp_path: Path) -> None:
    locomo = tmp_path / "locomo.json"
    cids = [f"c{n}" for n in range(8)]  # c6 falls in the held half
    locomo.write_text(json.dumps([_conversation(cid) for cid in cids]), encoding="utf-8")
    command = [sys.executable, "-m", "capy", "bench"]
    out = tmp_path / "ir"
    built = subprocess.run(
        [*command, "ir-build", "--out", str(out), "--locomo", str(locomo)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "locomo-turns-dev" in built.stdout
    assert (out / "locomo-sessions-held" / "qrels").is_file()
    ran = subprocess.run(
        [
            *command,
            "ablate",
            "--json",
            "--skip-vaswani",
            "--trec",
            str(trec_dir),
            "--locomo",
            str(locomo),
            "--only",
            "boosts.entity",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(ran.stdout)
    assert [row["collection"] for row in report["collections"]] == [
        "tiny-trec",
        "locomo-turns-dev",
        "locomo-sessions-dev",
        "locomo-summaries-dev",
    ]
    # The needle fixtures' dev half, per content type, full pipeline first.
    needles = report["needles"]
    assert needles["half"] == "dev" and needles["content_types"][-1] == "overall"
    assert [run["setting"] for run in needles["runs"]] == [ablate.FULL, "boosts.entity"]
    assert 0 < needles["runs"][0]["overall"]["r@1"] <= 1
    wrong = subprocess.run(
        [*command, "ablate", "--only", "boosts.nothing"], capture_output=True, text=True
    )
    assert wrong.returncode == 2 and "no ablation named boosts.nothing" in wrong.stderr
    assert "Traceback" not in wrong.stderr


@pytest.mark.skipif(not (LOCOMO / "locomo-dev.json").is_file(), reason="no shared LoCoMo data")
def test_shared_locomo_split() -> None:
    built = ir_locomo.collections(ir_locomo.load_locomo(LOCOMO / "locomo-dev.json"))
    names = [c.name for c in built]
    assert names == [
        "locomo-turns-dev",
        "locomo-turns-held",
        "locomo-sessions-dev",
        "locomo-sessions-held",
        "locomo-summaries-dev",
        "locomo-summaries-held",
    ]
    dev, held = built[0], built[1]
    assert not {d.docno.split(":")[0] for d in dev.documents} & {
        d.docno.split(":")[0] for d in held.documents
    }
