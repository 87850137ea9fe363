"""Shared helpers for the chunking tests: the shipped chunking view, fixture files, and the
invariants every chunk list must satisfy whatever the content type."""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.chunking import Chunk, chunk_text
from capy.rules import load_rules
from capy.rules.views.chunking import ChunkingPack

FIXTURES = Path(__file__).parent / "fixtures"


class Checks:
    def __init__(self, rules: ChunkingPack) -> None:
        self.rules = rules

    def well_formed(self, chunks: list[Chunk]) -> None:
        for chunk in chunks:
            assert chunk.content.strip(), "empty chunk"
            assert len(chunk.content.encode("utf-8")) <= self.rules.max_chunk_bytes, chunk.title
            assert chunk.title and len(chunk.title) <= self.rules.titles.max_chars, chunk.title

    @staticmethod
    def lines_kept(text: str, chunks: list[Chunk]) -> None:
        """Every non-blank input line (line endings normalised) is inside some chunk."""
        text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
        contents = [chunk.content for chunk in chunks]
        for line in text.split("\n"):
            needle = line.strip()
            if needle:
                assert any(needle in content for content in contents), f"lost line: {line!r}"

    @staticmethod
    def containing(chunks: list[Chunk], needle: str) -> list[Chunk]:
        return [chunk for chunk in chunks if needle in chunk.content]


@pytest.fixture(scope="session")
def shipped_rules(tmp_path_factory) -> ChunkingPack:
    """The shipped chunking view, loaded once: validating the packs takes seconds and the view is
    frozen. Loaded under a private HOME and working directory so no overlay can leak in."""
    home = tmp_path_factory.mktemp("chunking-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        patch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
        patch.chdir(tmp_path_factory.mktemp("chunking-project"))
        return load_rules().view("chunking")


@pytest.fixture
def rules(shipped_rules) -> ChunkingPack:
    return shipped_rules


@pytest.fixture
def checks(rules) -> Checks:
    return Checks(rules)


@pytest.fixture
def fixture_text():
    def read(name: str) -> str:
        return (FIXTURES / name).read_text(encoding="utf-8")

    return read


@pytest.fixture
def chunk(rules, fixture_text, checks):
    """Chunk a fixture file by name, labelled with its file name as `capy index PATH` does."""

    def run(name: str, content_type: str = "auto") -> list[Chunk]:
        chunks = chunk_text(fixture_text(name), content_type=content_type, label=name, rules=rules)
        checks.well_formed(chunks)
        return chunks

    return run
