"""The answer-less recall questions: format, the hash split, and that their sessions exist."""

from __future__ import annotations

import pytest

from capy.bench.recall_negatives import NEGATIVES_FILE, load_negatives
from capy.bench.recall_questions import QuestionSetError


def test_shipped_negatives_load_in_both_halves():
    questions = load_negatives()
    halves = [question.half for question in questions]
    assert halves.count("dev") >= 10 and halves.count("held") >= 10
    assert len({question.id for question in questions}) == len(questions)


def test_every_negative_names_a_transcript_that_exists(shared_testdata):
    root = shared_testdata("claude-transcripts")
    assert all((root / question.session).is_file() for question in load_negatives())


def test_a_half_off_the_hash_split_is_one_clear_error(tmp_path):
    text = NEGATIVES_FILE.read_text(encoding="utf-8")
    moved = tmp_path / "negatives.yaml"
    first_dev = text.index("half: dev")
    moved.write_text(text[:first_dev] + "half: held" + text[first_dev + 9 :], encoding="utf-8")
    with pytest.raises(QuestionSetError, match="the split rule puts it in 'dev'"):
        load_negatives(moved)


def test_an_unknown_key_is_one_clear_error(tmp_path):
    broken = tmp_path / "negatives.yaml"
    broken.write_text(
        "halves: [dev, held]\nquestions:\n  - {id: a, half: dev, session: s, question: q, x: 1}\n",
        encoding="utf-8",
    )
    with pytest.raises(QuestionSetError, match="must hold exactly"):
        load_negatives(broken)


def test_answer_less_questions_are_counted_per_half_on_a_real_log(tmp_path):
    from capy.bench.recall import _negatives_table, fresh_store, load_and_drain
    from capy.bench.recall_negatives import NegativeQuestion, run_negatives
    from capy.capsules import CapsuleDraft

    (tmp_path / "s.jsonl").write_text("{}\n", "utf-8")
    texts = ["I adopted a grey cat called Pixel last week.", "Pixel knocks my plants over."]
    drafts = [CapsuleDraft(kind="note", content=text, source="cli") for text in texts]
    questions = [
        NegativeQuestion("a", "dev", "s.jsonl", "Which helm chart did the kubernetes rollout use?"),
        NegativeQuestion("b", "held", "s.jsonl", "What is the grey cat called?"),
    ]
    store = fresh_store(tmp_path / "log.db")
    with store:
        load_and_drain(store, drafts)
        rows = run_negatives(store, questions, tmp_path, budget=300)
    assert rows == [
        {"half": "dev", "questions": 1, "returned": 0},
        {"half": "held", "questions": 1, "returned": 1},
    ]
    assert _negatives_table(rows).rows == [("dev", "1", "0"), ("held", "1", "1")]
