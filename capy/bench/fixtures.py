"""The quality-benchmark fixture format: JSONL, one haystack per line.

`{id, content_type, haystack, source_label, source_kind, cases: [{case_id, query, needles,
expected_rank_ceiling}]}`; a case with `needles: []` is negative and passes only when the search
returns nothing. See fixtures/bench/quality/tools/README.md for how the shipped files are built.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capy.rules.views.chunking import ContentType
from capy.rules.views.retention import SourceKind

# Written next to the fixtures by their generator: `<file>.jsonl:<case_id>` per line.
TYPO_LIST = Path("tools") / "typo_cases.txt"


class FixtureError(Exception):
    """A fixture file that does not follow the format; the message names file and line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class QualityCase:
    case_id: str
    query: str
    needles: tuple[str, ...]
    ceiling: int

    @property
    def negative(self) -> bool:
        return not self.needles


@dataclass(frozen=True)
class Haystack:
    id: str
    content_type: str
    text: str
    source_label: str
    source_kind: str
    cases: tuple[QualityCase, ...]

    @property
    def index_content_type(self) -> str:
        """The chunker's own type when it has one (log, code, transcript, ...); else detection
        decides."""
        return self.content_type if self.content_type in set(ContentType) else "auto"


def load_fixtures(directory: Path) -> list[Haystack]:
    """Every haystack of every `*.jsonl` file in `directory`, files in name order."""
    if not directory.is_dir():
        raise FixtureError(f"no fixture directory at {directory}; pass --fixtures DIR")
    files = sorted(directory.glob("*.jsonl"))
    if not files:
        raise FixtureError(f"no *.jsonl fixture files in {directory}")
    haystacks = [haystack for path in files for haystack in _load_file(path)]
    _check_unique(haystacks)
    return haystacks


def load_typo_ids(directory: Path) -> frozenset[str]:
    """Case ids that carry a deliberate typo, when the fixtures list them (reporting only)."""
    path = directory / TYPO_LIST
    if not path.is_file():
        return frozenset()
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.rpartition(":")[2].strip() for line in lines if line.strip())


def _load_file(path: Path) -> Iterator[Haystack]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                raise FixtureError(f"{where}: not valid JSON ({error.msg})") from None
            yield parse_haystack(data, where)


def parse_haystack(data: Any, where: str = "<fixture>") -> Haystack:
    """One JSONL entry, checked field by field; `where` prefixes every error."""
    if not isinstance(data, dict):
        raise FixtureError(f"{where}: an entry must be a JSON object")
    kind = _text(data, "source_kind", where)
    if kind not in set(SourceKind):
        raise FixtureError(f"{where}: source_kind {kind!r} is not one of {_names(SourceKind)}")
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise FixtureError(f"{where}: 'cases' must be a non-empty list")
    return Haystack(
        id=_text(data, "id", where),
        content_type=_text(data, "content_type", where),
        text=_text(data, "haystack", where),
        source_label=_text(data, "source_label", where),
        source_kind=kind,
        cases=tuple(_parse_case(case, f"{where}: case {i}") for i, case in enumerate(cases)),
    )


def _parse_case(data: Any, where: str) -> QualityCase:
    if not isinstance(data, dict):
        raise FixtureError(f"{where}: a case must be a JSON object")
    needles = data.get("needles")
    if not isinstance(needles, list) or not all(isinstance(n, str) and n for n in needles):
        raise FixtureError(f"{where}: 'needles' must be a list of non-empty strings")
    ceiling = data.get("expected_rank_ceiling", 10)
    if not isinstance(ceiling, int) or isinstance(ceiling, bool) or ceiling < 1:
        raise FixtureError(f"{where}: 'expected_rank_ceiling' must be a positive integer")
    return QualityCase(
        case_id=_text(data, "case_id", where),
        query=_text(data, "query", where, allow_empty=True),
        needles=tuple(needles),
        ceiling=ceiling,
    )


def _text(data: dict, key: str, where: str, *, allow_empty: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not (value or allow_empty):
        raise FixtureError(f"{where}: {key!r} must be a non-empty string")
    return value


def _names(enum: type) -> str:
    return ", ".join(member.value for member in enum)


def _check_unique(haystacks: list[Haystack]) -> None:
    seen_sources: set[tuple[str, str]] = set()
    seen_cases: set[str] = set()
    for haystack in haystacks:
        source = (haystack.source_label, haystack.source_kind)
        if source in seen_sources:
            raise FixtureError(
                f"haystack {haystack.id}: source {haystack.source_label!r} "
                f"({haystack.source_kind}) is used twice; every haystack needs its own source"
            )
        seen_sources.add(source)
        for case in haystack.cases:
            if case.case_id in seen_cases:
                raise FixtureError(f"case id {case.case_id!r} appears twice")
            seen_cases.add(case.case_id)
