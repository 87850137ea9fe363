"""The recall question set over real Claude Code transcripts: load, validate, split.

`fixtures/bench/recall/claude-questions.yaml` holds questions a user would ask later about what
happened in the sessions under `../shared/testdata/claude-transcripts`, each with the transcript
events (a line's `uuid`, or a tool call's `tool_use_id`) that answer it. The file declares its own
categories, halves and split rule; this module only checks that the questions keep to them.
Whether each evidence id exists in the transcripts is `capy.bench.recall_evidence`'s concern,
since that needs the shared test data.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capy.rules.yamlload import YamlLoadError, load_yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
QUESTIONS_FILE = REPO_ROOT / "fixtures" / "bench" / "recall" / "claude-questions.yaml"

HEADER_KEYS = (
    "version",
    "transcripts",
    "categories",
    "halves",
    "max_evidence",
    "split",
    "questions",
)
QUESTION_KEYS = ("id", "half", "category", "session", "question", "evidence")
# `added`: the day a question was written after the split was fixed. Such questions widen the
# tuning half with classes the held half shows weak, so they are dev by rule and never move a
# question of the fixed split.
OPTIONAL_QUESTION_KEYS = ("added",)
EVIDENCE_ID_KEYS = ("uuid", "tool_use_id")


class QuestionSetError(Exception):
    """A question file that does not follow the format; the message names file, line and fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Evidence:
    """One transcript event that answers a question: a line by `uuid`, or a tool call by the
    `tool_use_id` its call and its result share. `file` is relative to the transcripts folder."""

    file: str
    uuid: str | None = None
    tool_use_id: str | None = None

    @property
    def record_id(self) -> str:
        return self.uuid or self.tool_use_id or ""


@dataclass(frozen=True)
class RecallQuestion:
    id: str
    half: str
    category: str
    session: str
    question: str
    evidence: tuple[Evidence, ...]
    added: str | None = None  # written after the split (dev by rule), or None


@dataclass(frozen=True)
class QuestionSet:
    version: int
    transcripts: str  # folder under ../shared/testdata the evidence files are relative to
    categories: tuple[str, ...]
    halves: tuple[str, ...]  # (tuning half, held-out half)
    split_rule: str
    max_evidence: int
    questions: tuple[RecallQuestion, ...]

    def half(self, name: str) -> list[RecallQuestion]:
        return [question for question in self.questions if question.half == name]


def load_questions(path: Path = QUESTIONS_FILE) -> QuestionSet:
    """Parse and check the question file; any problem is one QuestionSetError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QuestionSetError(
            f"cannot read the question file {path} ({exc.strerror}); pass the path of "
            "claude-questions.yaml"
        ) from None
    try:
        loaded = load_yaml(text)
    except YamlLoadError as exc:
        where = f"{path}:{exc.position.line}:{exc.position.column}"
        raise QuestionSetError(f"{where}: {exc.message}; fix the YAML and load again") from None
    return _Checker(path, loaded).question_set()


def split_halves(questions: Iterable[RecallQuestion], halves: tuple[str, ...]) -> dict[str, str]:
    """The half each question belongs to under the file's split rule.

    Within each category the questions are ordered by the sha256 of their id, and the ranks
    alternate between the halves. Hashing makes the split independent of file order and of
    anyone's choice; going category by category keeps both halves alike in their mix. A
    question `added` after the split is in the tuning half and takes no rank.
    """
    by_category: dict[str, list[str]] = defaultdict(list)
    assigned: dict[str, str] = {}
    for question in questions:
        if question.added is not None:
            assigned[question.id] = halves[0]
        else:
            by_category[question.category].append(question.id)
    for ids in by_category.values():
        for rank, question_id in enumerate(sorted(ids, key=id_digest)):
            assigned[question_id] = halves[rank % len(halves)]
    return assigned


def id_digest(question_id: str) -> str:
    return hashlib.sha256(question_id.encode("utf-8")).hexdigest()


class _Checker:
    """Walks the loaded data once, turning the first problem into an error with its line."""

    def __init__(self, path: Path, loaded: Any) -> None:
        self.path = path
        self.loaded = loaded

    def fail(self, where: tuple, message: str) -> QuestionSetError:
        position = self.loaded.position_of(where)
        return QuestionSetError(f"{self.path}:{position.line}:{position.column}: {message}")

    def question_set(self) -> QuestionSet:
        data = self.loaded.data
        if not isinstance(data, dict):
            raise self.fail((), "the file must be a mapping with a `questions` list")
        self._keys(data, (), HEADER_KEYS)
        categories = self._names(data, "categories")
        halves = self._names(data, "halves")
        if len(halves) != 2:
            raise self.fail(("halves",), "`halves` must name exactly two halves: dev and held")
        split = data["split"]
        if not isinstance(split, dict) or not isinstance(split.get("rule"), str):
            raise self.fail(("split",), "`split` must be a mapping with a `rule` sentence")
        if set(split) != {"rule"}:
            raise self.fail(("split",), "`split` holds only the `rule` that made the halves")
        max_evidence = data["max_evidence"]
        if not isinstance(max_evidence, int) or isinstance(max_evidence, bool) or max_evidence < 1:
            raise self.fail(("max_evidence",), "`max_evidence` must be a whole number above 0")
        if not isinstance(data["version"], int) or not isinstance(data["transcripts"], str):
            raise self.fail((), "`version` must be a number and `transcripts` a folder name")
        raw = data["questions"]
        if not isinstance(raw, list) or not raw:
            raise self.fail(("questions",), "`questions` must be a non-empty list")
        context = (categories, halves, max_evidence)
        questions = [self._question(item, ("questions", n), context) for n, item in enumerate(raw)]
        self._unique(questions)
        return QuestionSet(
            version=data["version"],
            transcripts=data["transcripts"],
            categories=categories,
            halves=halves,
            split_rule=split["rule"],
            max_evidence=max_evidence,
            questions=tuple(questions),
        )

    def _keys(
        self, data: dict, where: tuple, expected: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> None:
        missing = [key for key in expected if key not in data]
        if missing:
            raise self.fail(where, f"missing {', '.join(f'`{key}`' for key in missing)}")
        extra = sorted(set(data) - set(expected) - set(optional))
        if extra:
            raise self.fail((*where, extra[0]), f"unknown key `{extra[0]}`; expected {expected}")

    def _names(self, data: dict, key: str) -> tuple[str, ...]:
        names = data[key]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail((key,), f"`{key}` must be a non-empty list of names")
        return tuple(names)

    def _question(self, item: Any, where: tuple, context: tuple) -> RecallQuestion:
        categories, halves, max_evidence = context
        if not isinstance(item, dict):
            raise self.fail(where, "each question must be a mapping")
        self._keys(item, where, QUESTION_KEYS, OPTIONAL_QUESTION_KEYS)
        for key in ("id", "half", "category", "session", "question", *OPTIONAL_QUESTION_KEYS):
            if key in item and (not isinstance(item[key], str) or not item[key].strip()):
                raise self.fail((*where, key), f"`{key}` must be a non-empty string")
        if item["category"] not in categories:
            raise self.fail((*where, "category"), f"category must be one of {list(categories)}")
        if item["half"] not in halves:
            raise self.fail((*where, "half"), f"half must be one of {list(halves)}")
        if "added" in item and item["half"] != halves[0]:
            raise self.fail(
                (*where, "half"),
                f"a question added after the split belongs to {halves[0]!r}: "
                "the held half is fixed",
            )
        evidence = item["evidence"]
        if not isinstance(evidence, list) or not 1 <= len(evidence) <= max_evidence:
            raise self.fail(
                (*where, "evidence"), f"`evidence` must list 1 to {max_evidence} transcript events"
            )
        items = tuple(self._evidence(e, (*where, "evidence", n)) for n, e in enumerate(evidence))
        return RecallQuestion(
            id=item["id"],
            half=item["half"],
            category=item["category"],
            session=item["session"],
            question=item["question"],
            evidence=items,
            added=item.get("added"),
        )

    def _evidence(self, item: Any, where: tuple) -> Evidence:
        ids = [key for key in EVIDENCE_ID_KEYS if isinstance(item, dict) and key in item]
        if not isinstance(item, dict) or len(ids) != 1 or set(item) != {"file", ids[0]}:
            raise self.fail(where, "evidence must be {file, uuid} or {file, tool_use_id}")
        if not all(isinstance(value, str) and value for value in item.values()):
            raise self.fail(where, "evidence `file` and id must be non-empty strings")
        return Evidence(file=item["file"], **{ids[0]: item[ids[0]]})

    def _unique(self, questions: list[RecallQuestion]) -> None:
        seen: set[str] = set()
        for n, question in enumerate(questions):
            if question.id in seen:
                raise self.fail(("questions", n, "id"), f"duplicate question id `{question.id}`")
            seen.add(question.id)
