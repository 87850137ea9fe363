"""The recall question set over the Claude Code transcripts: format, split, evidence ids."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from capy.bench.recall_evidence import (
    CapsuleKey,
    TranscriptIndex,
    capsule_key,
    evidence_recall,
    first_hit_rank,
    resolve_evidence,
)
from capy.bench.recall_questions import (
    QUESTIONS_FILE,
    QuestionSetError,
    load_questions,
    split_halves,
)

# The issue asks for at least 80 questions that survive review.
MIN_QUESTIONS = 80
# A question that shares this many words in a row with its evidence copies it instead of asking.
MAX_SHARED_RUN = 6
LONG_SESSION = "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SIDECAR = "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl"


@pytest.fixture(scope="module")
def questions():
    return load_questions()


@pytest.fixture
def transcripts(shared_testdata) -> Path:
    return shared_testdata("claude-transcripts")


def test_shipped_set_is_large_enough_and_uses_every_category(questions):
    assert len(questions.questions) >= MIN_QUESTIONS
    used = {(question.category, question.half) for question in questions.questions}
    assert used == {(c, h) for c in questions.categories for h in questions.halves}


def test_stored_halves_follow_the_split_rule(questions):
    assigned = split_halves(questions.questions, questions.halves)
    assert {q.id: q.half for q in questions.questions} == assigned


def test_both_halves_have_the_same_category_mix(questions):
    split = [question for question in questions.questions if question.added is None]
    counts = Counter((question.category, question.half) for question in split)
    dev, held = questions.halves
    for category in questions.categories:
        assert abs(counts[category, dev] - counts[category, held]) <= 1, category


def test_questions_added_after_the_split_are_dev_and_move_no_other(questions):
    added = [question for question in questions.questions if question.added is not None]
    assert added and {question.half for question in added} == {questions.halves[0]}
    fixed = [question for question in questions.questions if question.added is None]
    assert split_halves(fixed, questions.halves) == {
        question.id: question.half for question in fixed
    }


def test_added_questions_name_no_event_an_earlier_question_uses(questions):
    def events(chosen):
        return {item for question in chosen for item in question.evidence}

    added = [question for question in questions.questions if question.added is not None]
    fixed = [question for question in questions.questions if question.added is None]
    assert not events(added) & events(fixed)


def test_every_evidence_id_exists_in_the_transcripts(questions, transcripts):
    keys = resolve_evidence(questions, transcripts.parent)
    assert len(keys) == len({item for q in questions.questions for item in q.evidence})


def test_questions_paraphrase_rather_than_copy_their_evidence(questions, transcripts):
    texts: dict[str, dict[str, str]] = {}
    for question in questions.questions:
        asked = _words(question.question)
        for item in question.evidence:
            if item.file not in texts:
                texts[item.file] = _event_texts(transcripts / item.file)
            said = f" {' '.join(_words(texts[item.file][item.record_id]))} "
            assert _longest_shared_run(asked, said) < MAX_SHARED_RUN, question.id


def test_a_reply_spread_over_lines_matches_whichever_line_the_importer_keeps(transcripts):
    index = TranscriptIndex.read(transcripts / LONG_SESSION)
    group = next(g for g in index.message_groups.values() if len(g) > 2)
    first, *others = sorted(group)
    key = capsule_key(transcripts / LONG_SESSION, first)
    session = Path(LONG_SESSION).stem
    assert all(key.matches({"session_id": session, "message_uuid": uuid}) for uuid in others)
    assert not key.matches({"session_id": "another-session", "message_uuid": first})


def test_a_tool_call_matches_by_its_tool_use_id_only(transcripts):
    index = TranscriptIndex.read(transcripts / LONG_SESSION)
    tool_use_id = sorted(index.tool_results & set(index.tool_calls))[0]
    key = capsule_key(transcripts / LONG_SESSION, tool_use_id)
    session = Path(LONG_SESSION).stem
    assert key.matches({"session_id": session, "tool_use_id": tool_use_id, "message_uuid": "x"})
    assert not key.matches({"session_id": session, "message_uuid": tool_use_id})


def test_a_sidecar_event_matches_its_file_name_or_its_parent_session(transcripts):
    index = TranscriptIndex.read(transcripts / SIDECAR)
    uuid = next(iter(index.line_sessions))
    key = capsule_key(transcripts / SIDECAR, uuid)
    assert key.session_ids == {Path(SIDECAR).stem, Path(LONG_SESSION).stem}


def test_recall_at_k_counts_each_evidence_item_once_within_the_top_k():
    reply = CapsuleKey(frozenset({"s"}), message_uuids=frozenset({"u1", "u2"}))
    call = CapsuleKey(frozenset({"s"}), tool_use_id="toolu_1")
    recalled = [
        {"session_id": "s", "message_uuid": "other"},
        {"session_id": "s", "message_uuid": "u2"},
        {"session_id": "s", "message_uuid": "u1"},
        {"session_id": "s", "tool_use_id": "toolu_1"},
    ]
    assert evidence_recall([reply, call], recalled, 3) == 0.5
    assert evidence_recall([reply, call], recalled, 4) == 1.0
    assert first_hit_rank([reply, call], recalled) == 2
    assert first_hit_rank([call], recalled[:3]) is None


def test_an_unknown_id_is_one_clear_error(transcripts):
    with pytest.raises(QuestionSetError, match="has no line uuid or answered tool call `nope`"):
        capsule_key(transcripts / LONG_SESSION, "nope")


def test_missing_evidence_is_listed_by_question(tmp_path, transcripts):
    text = QUESTIONS_FILE.read_text(encoding="utf-8")
    first_uuid = re.search(r"uuid: ([0-9a-f-]{36})", text).group(1)
    broken = _write(tmp_path, text.replace(first_uuid, "00000000-dead-beef-0000-000000000000", 1))
    with pytest.raises(QuestionSetError) as caught:
        resolve_evidence(load_questions(broken), transcripts.parent)
    assert "00000000-dead-beef-0000-000000000000" in caught.value.message
    assert caught.value.message.endswith("fix the ids in the file")


def test_absent_transcripts_folder_says_where_it_looked(tmp_path, questions):
    with pytest.raises(QuestionSetError, match="no transcripts folder at"):
        resolve_evidence(questions, tmp_path)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("  - id: otel-02\n", "  - id: otel-01\n", "duplicate question id `otel-01`"),
        ("category: request\n", "category: chit-chat\n", "category must be one of"),
        ("half: dev\n", "half: later\n", "half must be one of"),
        ("max_evidence: 3\n", "max_evidence: 0\n", "`max_evidence` must be a whole number"),
        ("    evidence:\n", "    evidence: []\n    ignored:\n", "unknown key `ignored`"),
        ("{file: ", "{kind: diff, file: ", "evidence must be {file, uuid} or {file, tool_use_id}"),
        ("version: 1\n", "version: 1\nversion: 2\n", "duplicate key"),
        (
            "    half: dev\n    category: change\n    added:",
            "    half: held\n    category: change\n    added:",
            "belongs to 'dev': the held half is fixed",
        ),
    ],
)
def test_a_malformed_file_names_its_line(tmp_path, old, new, expected):
    path = _write(tmp_path, QUESTIONS_FILE.read_text(encoding="utf-8").replace(old, new, 1))
    with pytest.raises(QuestionSetError) as caught:
        load_questions(path)
    assert expected in caught.value.message
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: ", caught.value.message)


def test_an_unreadable_file_is_one_sentence(tmp_path):
    with pytest.raises(QuestionSetError, match=r"cannot read the question file .*; pass the path"):
        load_questions(tmp_path / "absent.yaml")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "questions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_.]+", text.lower())


def _longest_shared_run(asked: list[str], said: str) -> int:
    for size in range(len(asked), 0, -1):
        for start in range(len(asked) - size + 1):
            if f" {' '.join(asked[start : start + size])} " in said:
                return size
    return 0


def _event_texts(path: Path) -> dict[str, str]:
    """Text per line uuid and per tool_use_id (call input plus result), for the copy check."""
    texts: defaultdict[str, str] = defaultdict(str)
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, str):
                texts[record.get("uuid", "")] += block
            elif isinstance(block, dict) and block.get("type") == "text":
                texts[record.get("uuid", "")] += block.get("text", "")
            elif isinstance(block, dict) and block.get("type") == "tool_use":
                texts[block["id"]] += json.dumps(block.get("input"))
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                texts[block["tool_use_id"]] += _result_text(block.get("content"))
    return dict(texts)


def _result_text(content: object) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)
