"""TREC documents, topics and qrels, read from small handmade files; and the bm25 floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.bench import trec
from capy.bench.trec_format import (
    TrecFormatError,
    load_collection,
    parse_documents,
    parse_qrels,
    parse_topics,
)


def test_documents(trec_dir: Path) -> None:
    documents = parse_documents(trec_dir / "doc-text.trec")
    assert [d.docno for d in documents] == ["d1", "d2", "d3", "d4", "d5"]
    assert documents[0].text == "the microwave measurement of dielectric constants of liquids"
    assert documents[1].text == "waveguide design for microwave radiation"  # <TEXT> dropped


def test_topics_in_both_layouts(trec_dir: Path) -> None:
    topics = parse_topics(trec_dir / "query-text.trec")
    assert [(t.id, t.text) for t in topics] == [
        ("1", "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS"),
        ("2", "WAVEGUIDE MICROWAVE DESIGN"),
        ("3", "DATA CODING FOR INFORMATION TRANSFER"),
    ]


def test_qrels_keep_relevant_documents_only(trec_dir: Path) -> None:
    assert parse_qrels(trec_dir / "qrels") == {
        "1": {"d1"},
        "2": {"d2", "d3"},
        "3": {"d4"},
    }


def test_collection_and_judged_topics(trec_dir: Path) -> None:
    (trec_dir / "qrels").write_text("1 0 d1 1\n2 0 d2 0\n", encoding="utf-8")
    collection = load_collection(trec_dir)
    assert collection.name == "tiny-trec"
    assert [t.id for t in collection.judged_topics] == ["1"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("doc-text.trec", "<DOC>\nno number here\n</DOC>\n", r"doc-text\.trec:1: <DOC> without"),
        ("doc-text.trec", "<DOC><DOCNO>a</DOCNO>x</DOC>\n<DOC><DOCNO>a</DOCNO>y</DOC>", "twice"),
        ("doc-text.trec", "just text", "no <DOC>"),
        ("query-text.trec", "\n<top><num>1</num></top>", r"query-text\.trec:2: a topic needs"),
        ("query-text.trec", "nothing", "no <top>"),
        ("qrels", "1 0 d1 1\n1 0 d2\n", r"qrels:2: expected 'topic iteration docno relevance'"),
        ("qrels", "1 0 d1 yes\n", "qrels:1:"),
    ],
)
def test_format_errors_name_file_and_line(trec_dir: Path, name: str, text: str, message: str):
    (trec_dir / name).write_text(text, encoding="utf-8")
    with pytest.raises(TrecFormatError, match=message):
        load_collection(trec_dir)


def test_missing_files_are_listed(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("", encoding="utf-8")
    with pytest.raises(TrecFormatError, match=r"missing doc-text\.trec, query-text\.trec"):
        load_collection(tmp_path)


def test_floor_query_quotes_raw_terms() -> None:
    assert trec.floor_query('USE OF "NEAR" AND-OR x_y') == (
        '"use" OR "of" OR "near" OR "and" OR "or" OR "x_y"'
    )
    assert trec.floor_query("?!") == ""


def test_floor_ranks_by_bm25(trec_dir: Path) -> None:
    collection = load_collection(trec_dir)
    conn = trec.build_floor(collection.documents)
    assert trec.floor_ranking(conn, "MEASUREMENT OF DIELECTRIC CONSTANT")[0] == "d1"
    assert trec.floor_ranking(conn, "waveguide microwave")[:2] == ["d2", "d1"]
    assert trec.floor_ranking(conn, "   ") == []


def test_docnos_keep_each_source_once() -> None:
    class Hit:
        def __init__(self, label: str) -> None:
            self.source_label = label

    assert trec.docnos([Hit("a"), Hit("b"), Hit("a"), Hit("c")]) == ["a", "b", "c"]
