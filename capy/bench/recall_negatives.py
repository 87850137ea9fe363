"""Answer-less questions for `capy bench recall`: each asks, within a Claude transcript
session's project, about something that never happened there, so recall should say nothing
matched. `fixtures/bench/recall/claude-negatives.yaml` holds them, split into halves by the
hash of their id; the bench counts, per half, how many returned something anyway."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.bench.recall_questions import REPO_ROOT, QuestionSetError, id_digest
from capy.rules.yamlload import YamlLoadError, load_yaml

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore

NEGATIVES_FILE = REPO_ROOT / "fixtures" / "bench" / "recall" / "claude-negatives.yaml"
QUESTION_KEYS = {"id", "half", "session", "question"}


@dataclass(frozen=True)
class NegativeQuestion:
    id: str
    half: str
    session: str  # the transcript whose project the question is asked in
    question: str


def load_negatives(path: Path = NEGATIVES_FILE) -> list[NegativeQuestion]:
    """The answer-less questions; a malformed file or a half off the hash split is one error."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8")).data
    except (OSError, YamlLoadError) as exc:
        raise QuestionSetError(f"cannot read {path}: {exc}; fix or restore the file") from None
    raw = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not all(
        isinstance(item, dict) and set(item) == QUESTION_KEYS for item in raw
    ):
        raise QuestionSetError(f"{path}: each question must hold exactly {sorted(QUESTION_KEYS)}")
    questions = [NegativeQuestion(**{key: str(item[key]) for key in QUESTION_KEYS}) for item in raw]
    halves = data["halves"]
    ranked = sorted(questions, key=lambda question: id_digest(question.id))
    for rank, question in enumerate(ranked):
        if question.half != halves[rank % len(halves)]:
            raise QuestionSetError(
                f"{path}: {question.id} is in half {question.half!r}, but the split rule puts it "
                f"in {halves[rank % len(halves)]!r}; the halves are fixed by the ids' hashes"
            )
    return questions


def run_negatives(
    store: CapsuleStore, questions: list[NegativeQuestion], root: Path, *, budget: int
) -> list[dict[str, Any]]:
    """Per half: how many answer-less questions recall returned something for."""
    from capy.capsules.recall import recall
    from capy.sessions.discovery import peek_cwd

    rows: dict[str, dict[str, Any]] = {}
    for question in questions:
        project = peek_cwd(root / question.session) or str(store.default_scope.project)
        result = recall(store, question.question, budget_tokens=budget, project=project)
        row = rows.setdefault(question.half, {"half": question.half, "questions": 0, "returned": 0})
        row["questions"] += 1
        row["returned"] += bool(result.items)
    return [rows[half] for half in sorted(rows)]
