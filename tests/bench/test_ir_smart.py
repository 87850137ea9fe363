"""SMART-format collections (the ADI, CACM, TIME layout) as TREC collections, on handmade files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from capy.bench.ir_smart import load_smart, records
from capy.bench.trec_format import load_collection

DOCUMENTS = """.I 1
.T
a program for dissemination
of specific data .
.A
H. T. JOHNSON
.W
an indexing vocabulary of descriptors
 is used to index and abstract .
.I 02
.T
microfiche, a new information media .
.B
CACM June, 1960
.W
standard specifications for card size .
.X
1	5	1
"""
QUERIES = """.I 1
.W
Methods of coding used in
computerized index systems.
.N
 1. something the collection notes
.I 2
.W
Microfiche standards.
"""
JUDGEMENTS = "01 1 0 0\n1   02   0   0.000000\n3 1 0 0\n"


def _folder(tmp_path: Path, *, queries: str = "TINY.QRY") -> Path:
    folder = tmp_path / "Tiny"
    folder.mkdir()
    (folder / "TINY.ALL").write_text(DOCUMENTS, encoding="utf-8")
    (folder / queries).write_text(QUERIES, encoding="utf-8")
    (folder / "TINY.REL").write_text(JUDGEMENTS, encoding="utf-8")
    return folder


def test_title_and_abstract_keep_their_lines_and_drop_other_fields(tmp_path: Path) -> None:
    collection = load_smart(_folder(tmp_path))
    assert collection.name == "tiny"
    assert [d.docno for d in collection.documents] == ["1", "2"]
    assert collection.documents[0].text == (
        "a program for dissemination\nof specific data .\n"
        "an indexing vocabulary of descriptors\nis used to index and abstract ."
    )
    assert "CACM" not in collection.documents[1].text and "1\t5" not in collection.documents[1].text
    assert [(t.id, t.text) for t in collection.topics] == [
        ("1", "Methods of coding used in\ncomputerized index systems."),
        ("2", "Microfiche standards."),
    ]
    # Leading zeros go, as the judgement files write ids without them; topic 3 has no query.
    assert collection.qrels == {"1": {"1", "2"}, "3": {"1"}}
    assert [t.id for t in collection.judged_topics] == ["1"]


def test_a_field_repeated_in_a_record_is_kept_whole() -> None:
    text = ".I 7\n.T\nfirst title .\n.A\nX\n.T\n again .\n.W\nbody\n"
    assert records(text, ("T", "W")) == [("7", "first title .\nagain .\nbody")]


def test_cli_writes_the_trec_layout_and_refuses_a_folder_without_queries(tmp_path: Path) -> None:
    folder = _folder(tmp_path, queries="query.text")
    out = tmp_path / "ir"
    command = [sys.executable, "-m", "capy", "bench", "ir-build", "--out", str(out)]
    built = subprocess.run(
        [*command, "--smart", str(folder)], capture_output=True, text=True, check=True
    )
    assert "2 documents, 1 judged topics" in built.stdout
    again = load_collection(out / "tiny")
    first = again.topics[0].text
    assert first == "Methods of coding used in computerized index systems."
    assert again.qrels["1"] == {"1", "2"}
    (folder / "query.text").unlink()
    wrong = subprocess.run([*command, "--smart", str(folder)], capture_output=True, text=True)
    assert wrong.returncode == 2 and "needs exactly one queries file" in wrong.stderr
    assert "Traceback" not in wrong.stderr


@pytest.mark.parametrize("name", ["ADI.ALL", "cacm.all"])
def test_documents_file_found_whatever_its_case(tmp_path: Path, name: str) -> None:
    folder = _folder(tmp_path)
    (folder / "TINY.ALL").rename(folder / name)
    assert len(load_smart(folder).documents) == 2
