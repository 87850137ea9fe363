"""Classic SMART-format test collections (ADI, CACM, CISI, TIME, ...) as TREC collections.

The SMART layout (Cornell's distribution, copied into many course repositories) is three files:
- documents (`ADI.ALL`, `cacm.all`): records opened by `.I id`, fields opened by a line `.X`
  (`.T` title, `.W` abstract or text, `.A` authors, `.B` source, `.K` keywords, `.N`, `.X`, `.C`);
- queries (`ADI.QRY`, `query.text`): the same records, the query text under `.W`;
- judgements (`ADI.REL`, `qrels.text`): `query doc ...` per line, every listed pair relevant.

A document's text is its title and abstract (`.T` then `.W`), the fields a reader of the
abstract sees and the ones published baselines index, with their line breaks as written (as
TREC vaswani keeps its abstracts' lines); author, source and citation fields are left out. A
query is its `.W` text (the TREC reader joins a topic's lines). The files are read from a local
folder: the collections carry their own terms of use, so they stay out of the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from capy.bench.trec_format import Topic, TrecCollection, TrecDocument

DOCUMENT_FIELDS = ("T", "W")
QUERY_FIELDS = ("W",)
_RECORD = re.compile(r"^\.I\s+(\S+)", re.MULTILINE)
_FIELD = re.compile(r"^\.([A-Z])\s*$", re.MULTILINE)
# Which file of a folder is which, by how its name ends (case-insensitive).
_ROLES = {
    "documents": (".all",),
    "queries": (".qry", "query.text"),
    "judgements": (".rel", "qrels.text"),
}


def records(text: str, fields: tuple[str, ...]) -> list[tuple[str, str]]:
    """(id, the chosen fields' text joined in the order given), in file order."""
    found = []
    starts = list(_RECORD.finditer(text))
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[match.end() : end]
        parts: dict[str, list[str]] = {}
        marks = list(_FIELD.finditer(body))
        for number, mark in enumerate(marks):
            stop = marks[number + 1].start() if number + 1 < len(marks) else len(body)
            parts.setdefault(mark.group(1), []).append(body[mark.end() : stop])
        chosen = [_lines(part) for name in fields for part in parts.get(name, [])]
        found.append((match.group(1), "\n".join(part for part in chosen if part)))
    return found


def _lines(text: str) -> str:
    """The field's lines as written (line breaks are the text's shape: the chunker reads
    them), each stripped, blank lines kept inside and dropped at the ends."""
    return "\n".join(line.strip() for line in text.strip("\n").splitlines()).strip()


def judgements(text: str) -> dict[str, frozenset[str]]:
    relevant: dict[str, set[str]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            relevant.setdefault(fields[0].lstrip("0") or "0", set()).add(fields[1].lstrip("0"))
    return {query: frozenset(docs) for query, docs in relevant.items()}


def load_smart(folder: Path, name: str | None = None) -> TrecCollection:
    """The collection in `folder` (one file of each role); ids lose leading zeros, as the
    judgement files write them without."""
    paths = {role: _one(folder, role) for role in _ROLES}
    read = {
        role: path.read_text(encoding="utf-8", errors="replace") for role, path in paths.items()
    }
    documents = tuple(
        TrecDocument(docid.lstrip("0"), body)
        for docid, body in records(read["documents"], DOCUMENT_FIELDS)
    )
    topics = tuple(
        Topic(qid.lstrip("0"), body) for qid, body in records(read["queries"], QUERY_FIELDS)
    )
    return TrecCollection(
        name or folder.name.lower(), documents, topics, judgements(read["judgements"])
    )


def _one(folder: Path, role: str) -> Path:
    endings = _ROLES[role]
    found = [
        path
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name.lower().endswith(endings)
    ]
    if len(found) != 1:
        raise ValueError(
            f"{folder} needs exactly one {role} file (a name ending in {' or '.join(endings)}); "
            f"found {len(found)}"
        )
    return found[0]
