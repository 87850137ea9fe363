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
