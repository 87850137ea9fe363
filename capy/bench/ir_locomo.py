"""LoCoMo conversations as TREC-style prose collections: turns and sessions, split by conversation.

LoCoMo (`../shared/testdata/locomo`, CC BY-NC 4.0: test data only, never copied into the
repository) holds long conversations with questions whose `evidence` names the turns that answer
them. Two collections come from it, both judged by that evidence (binary relevance):
- turns: one document per turn (`Speaker: text`, the photo caption appended when there is one),
  DOCNO `conv-26:D1:3`; a question's relevant documents are its evidence turns;
- sessions: one document per session (its date line, then every turn), DOCNO `conv-26:S1`;
  a question's relevant documents are the sessions holding its evidence;
- summaries: the turns again, searched with the upstream summary of each session (about 110
  words of prose, written by the dataset's authors) as the topic; its relevant documents are
  that session's turns. Questions are short; these are the long prose queries.

Each conversation goes wholly to the dev half or the held half, by the first byte of the sha256 of
its id (even: dev), fixed before any tuning; each half's collection pools its conversations, so
questions see the other conversations' turns as distractors. Questions without evidence are left
out; every other question is kept, whatever its category.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

from capy.bench.trec_format import (
    DOCUMENTS_FILE,
    QRELS_FILE,
    TOPICS_FILE,
    Topic,
    TrecCollection,
    TrecDocument,
)

HALVES = ("dev", "held")
GRAINS = ("turns", "sessions", "summaries")
_SESSION = re.compile(r"^session_(\d+)$")


def half_of(conversation_id: str) -> str:
    """dev or held, fixed by the id alone (not by its position in the file)."""
    return HALVES[hashlib.sha256(conversation_id.encode("utf-8")).digest()[0] % 2]


def load_locomo(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path} is not a LoCoMo file (expected a list of conversations)")
    return data


def collections(conversations: Iterable[dict]) -> list[TrecCollection]:
    """locomo-turns-dev, locomo-turns-held, locomo-sessions-dev, locomo-sessions-held."""
    by_half: dict[str, list[dict]] = {half: [] for half in HALVES}
    for conversation in conversations:
        by_half[half_of(conversation["sample_id"])].append(conversation)
    return [
        build(grain, half, by_half[half]) for grain in GRAINS for half in HALVES if by_half[half]
    ]


def build(grain: str, half: str, conversations: list[dict]) -> TrecCollection:
    documents: list[TrecDocument] = []
    topics: list[Topic] = []
    qrels: dict[str, frozenset[str]] = {}
    for conversation in conversations:
        cid = conversation["sample_id"]
        turn_doc: dict[str, str] = {}  # dia_id -> docno holding it
        for number, date, turns in _sessions(conversation["conversation"]):
            if grain == "sessions":  # turns and summaries index the turns
                docno = f"{cid}:S{number}"
                lines = [date] if date else []
                documents.append(TrecDocument(docno, "\n".join(lines + [_turn(t) for t in turns])))
                turn_doc.update((t["dia_id"], docno) for t in turns)
            else:
                for turn in turns:
                    docno = f"{cid}:{turn['dia_id']}"
                    documents.append(TrecDocument(docno, _turn(turn)))
                    turn_doc[turn["dia_id"]] = docno
        if grain == "summaries":
            _summary_topics(conversation, turn_doc, topics, qrels)
            continue
        for index, qa in enumerate(conversation.get("qa", [])):
            relevant = frozenset(
                turn_doc[e] for e in _evidence(qa.get("evidence")) if e in turn_doc
            )
            if not relevant or not str(qa.get("question", "")).strip():
                continue
            topic_id = f"{cid}:q{index}"
            topics.append(Topic(topic_id, " ".join(str(qa["question"]).split())))
            qrels[topic_id] = relevant
    return TrecCollection(f"locomo-{grain}-{half}", tuple(documents), tuple(topics), qrels)


def _summary_topics(
    conversation: dict,
    turn_doc: dict[str, str],
    topics: list[Topic],
    qrels: dict[str, frozenset[str]],
) -> None:
    cid = conversation["sample_id"]
    summaries = conversation.get("session_summary") or {}
    for number, _date, turns in _sessions(conversation["conversation"]):
        text = " ".join(str(summaries.get(f"session_{number}_summary", "")).split())
        relevant = frozenset(turn_doc[t["dia_id"]] for t in turns if t.get("dia_id") in turn_doc)
        if text and relevant:
            topic_id = f"{cid}:s{number}"
            topics.append(Topic(topic_id, text))
            qrels[topic_id] = relevant


def _sessions(conversation: dict) -> list[tuple[int, str, list[dict]]]:
    found = []
    for key, turns in conversation.items():
        match = _SESSION.match(key)
        if match and isinstance(turns, list) and turns:
            date = str(conversation.get(f"{key}_date_time", ""))
            found.append((int(match.group(1)), date, turns))
    return sorted(found, key=lambda item: item[0])


def _turn(turn: dict) -> str:
    text = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


def _evidence(value: object) -> list[str]:
    """Evidence ids as listed; a few upstream entries hold several ids in one string."""
    if not isinstance(value, list):
        return []
    return [part for item in value for part in re.split(r"[;,\s]+", str(item)) if part]


def write_collection(collection: TrecCollection, directory: Path) -> Path:
    """The TREC layout `load_collection` reads, in `directory / collection.name`."""
    target = directory / collection.name
    target.mkdir(parents=True, exist_ok=True)
    docs = "".join(
        f"<DOC>\n<DOCNO>{d.docno}</DOCNO>\n{_escape(d.text)}\n</DOC>\n"
        for d in collection.documents
    )
    (target / DOCUMENTS_FILE).write_text(docs, encoding="utf-8")
    tops = "".join(
        f"<top>\n<num>{t.id}</num><title>\n{_escape(t.text)}\n</title>\n</top>\n"
        for t in collection.topics
    )
    (target / TOPICS_FILE).write_text(tops, encoding="utf-8")
    qrels = "".join(
        f"{topic} 0 {docno} 1\n"
        for topic, docnos in collection.qrels.items()
        for docno in sorted(docnos)
    )
    (target / QRELS_FILE).write_text(qrels, encoding="utf-8")
    return target


def _escape(text: str) -> str:
    """The reader drops `<...>` tags: angle brackets in the text become look-alikes it keeps."""
    return text.replace("<", "‹").replace(">", "›")
