"""The inputs `capy bench peer` gives both servers: real third-party text files, and queries.

The corpus is the largest text files under a folder (by default the shared test data beside
the repository: TREC abstracts, agent transcripts, conversations, detector rules, licences),
each cut at a line boundary to capy's per-source cap, so that neither server is handed text
the other would not keep whole. The cut files are written once into a scratch folder and both
servers index the same paths. Mind what the corpus holds when reading the figures: context-mode
splits markdown at its headings but stores a file of any other kind as one section, which
indexes fast and searches slowly; `--corpus DIR --pattern '*.md'` with a queries file of its own
(fixtures/bench/peer/queries-nodejs-api.txt, for the Node.js API reference) compares docs.

The queries were written from the corpus before either server's answers were seen; both
servers get the same ones, one per call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "testdata"
QUERIES_FILE = REPO_ROOT / "fixtures" / "bench" / "peer" / "queries.txt"
DEFAULT_FILES = 36


class CorpusError(Exception):
    """Bad corpus or queries; the message says what to do."""


@dataclass(frozen=True)
class CorpusFile:
    path: Path  # the cut copy both servers index
    label: str  # the source label both servers store it under
    size: int


def build_corpus(
    root: Path, count: int, max_bytes: int, into: Path, pattern: str = "*"
) -> list[CorpusFile]:
    """The `count` largest text files under `root` whose names match `pattern`, each cut to
    `max_bytes`, copied into `into`."""
    if not root.is_dir():
        raise CorpusError(f"no corpus folder at {root}; pass --corpus DIR with text files in it")
    candidates = sorted(
        (path for path in root.rglob(pattern) if path.is_file() and not path.is_symlink()),
        key=lambda path: (-path.stat().st_size, str(path)),
    )
    chosen: list[CorpusFile] = []
    for path in candidates:
        if len(chosen) == count:
            break
        text = _text_head(path, max_bytes)
        if not text:
            continue
        label = str(path.relative_to(root))
        copy = into / f"{len(chosen):02d}-{path.name}"
        copy.write_bytes(text)
        chosen.append(CorpusFile(copy, label, len(text)))
    if not chosen:
        raise CorpusError(
            f"no text files named {pattern} under {root}; pass --corpus DIR with text files in it"
        )
    return chosen


def _text_head(path: Path, max_bytes: int) -> bytes:
    """The file's first `max_bytes` cut after its last whole line; b"" for binary files."""
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if b"\0" in data:
        return b""
    if len(data) > max_bytes:
        data = data[: data.rfind(b"\n", 0, max_bytes) + 1] or data[:max_bytes]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return b""
    return data


def load_queries(path: Path = QUERIES_FILE) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CorpusError(f"could not read the queries in {path}: {error.strerror}") from None
    queries = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    if not queries:
        raise CorpusError(f"{path} holds no queries; write one query per line")
    return queries
