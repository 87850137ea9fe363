"""TREC-format collections: documents, topics and qrels, read into plain Python values.

The layout is the one terrier ships for Vaswani (`../shared/testdata/ir/vaswani`):
- `doc-text.trec`: `<DOC><DOCNO>id</DOCNO> text </DOC>`; any other tags inside a document
  (`<TEXT>`, `<HEAD>` in other collections) are dropped, their text kept.
- `query-text.trec`: `<top><num>id</num><title> text </title></top>`; classic TREC topics
  (`<num> Number: 401`, a `<title>` ended by the next tag instead of `</title>`) read too.
- `qrels`: `topic iteration docno relevance` per line; relevance > 0 is relevant (binary).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCUMENTS_FILE = "doc-text.trec"
TOPICS_FILE = "query-text.trec"
QRELS_FILE = "qrels"

_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.DOTALL | re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.DOTALL | re.IGNORECASE)
_TOP = re.compile(r"<top>(.*?)</top>", re.DOTALL | re.IGNORECASE)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*([^<\s]+)", re.IGNORECASE)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?(.*?)(?:</title>|<[a-z]+>|$)", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]{1,40}>")


class TrecFormatError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class TrecDocument:
    docno: str
    text: str


@dataclass(frozen=True)
class Topic:
    id: str
    text: str


@dataclass(frozen=True)
class TrecCollection:
    name: str
    documents: tuple[TrecDocument, ...]
    topics: tuple[Topic, ...]
    qrels: dict[str, frozenset[str]]  # topic id -> relevant docnos

    @property
    def judged_topics(self) -> tuple[Topic, ...]:
        """Topics with at least one relevant document: the ones trec_eval averages over."""
        return tuple(topic for topic in self.topics if self.qrels.get(topic.id))


def load_collection(directory: Path) -> TrecCollection:
    missing = [
        name
        for name in (DOCUMENTS_FILE, TOPICS_FILE, QRELS_FILE)
        if not (directory / name).is_file()
    ]
    if missing:
        raise TrecFormatError(
            f"{directory} is not a TREC collection: missing {', '.join(missing)} "
            f"(expected {DOCUMENTS_FILE}, {TOPICS_FILE} and {QRELS_FILE})"
        )
    return TrecCollection(
        name=directory.name,
        documents=tuple(parse_documents(directory / DOCUMENTS_FILE)),
        topics=tuple(parse_topics(directory / TOPICS_FILE)),
        qrels=parse_qrels(directory / QRELS_FILE),
    )


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def parse_documents(path: Path) -> list[TrecDocument]:
    text = _read(path)
    documents, seen = [], set()
    for match in _DOC.finditer(text):
        body = match.group(1)
        docno = _DOCNO.search(body)
        if not docno or not docno.group(1):
            raise TrecFormatError(f"{path}:{_line_of(text, match.start())}: <DOC> without <DOCNO>")
        if docno.group(1) in seen:
            raise TrecFormatError(
                f"{path}:{_line_of(text, match.start())}: DOCNO {docno.group(1)} appears twice"
            )
        seen.add(docno.group(1))
        content = _TAG.sub(" ", body[: docno.start()] + body[docno.end() :])
        documents.append(TrecDocument(docno.group(1), content.strip()))
    if not documents:
        raise TrecFormatError(f"{path}: no <DOC> ... </DOC> documents found")
    return documents


def parse_topics(path: Path) -> list[Topic]:
    text = _read(path)
    topics = []
    for match in _TOP.finditer(text):
        num, title = _NUM.search(match.group(1)), _TITLE.search(match.group(1))
        if not num or not title:
            raise TrecFormatError(
                f"{path}:{_line_of(text, match.start())}: a topic needs <num> and <title>"
            )
        topics.append(Topic(num.group(1), " ".join(title.group(1).split())))
    if not topics:
        raise TrecFormatError(f"{path}: no <top> ... </top> topics found")
    return topics


def parse_qrels(path: Path) -> dict[str, frozenset[str]]:
    relevant: dict[str, set[str]] = {}
    for number, line in enumerate(_read(path).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4 or not _is_int(fields[3]):
            raise TrecFormatError(
                f"{path}:{number}: expected 'topic iteration docno relevance', got {line.strip()!r}"
            )
        topic, _iteration, docno, relevance = fields
        judged = relevant.setdefault(topic, set())
        if int(relevance) > 0:
            judged.add(docno)
    return {topic: frozenset(docs) for topic, docs in relevant.items()}


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()
