"""Context reduction ("needle in a haystack"): what `capy_execute` with an intent keeps out.

Each scenario is a realistic tool output (a test run, a build log, an access log, a JSON API
response...) with questions an agent would ask about it and the facts (needles) each answer
needs. Every question runs through the real path, `execute_code(..., code="cat <file>",
intent=question)` in a throwaway project and HOME, and both figures are measured on exactly
`reply.text`, the text the agent receives: bytes returned against bytes the command printed,
and the share of needles that text contains.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capy.bench.report import Table, fmt, goals_table

INDEX_FILE = "scenarios.jsonl"
GOAL_KEPT_OUT = 0.95
GOAL_RECALL = 0.98
GOAL_SCENARIOS = 20
# The variables that decide where capy reads config and keeps keys and data: pointed at the
# throwaway HOME for the run, so the bench never touches the user's own.
_HOME_VARIABLES = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")

Progress = Callable[[str, int, int], None] | None


class NiahFixtureError(Exception):
    """A scenario file that does not follow the format; the message names file and line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class NiahCase:
    case_id: str
    query: str
    needles: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    id: str
    tool: str
    command: str
    path: Path
    cases: tuple[NiahCase, ...]


def load_scenarios(directory: Path) -> list[Scenario]:
    """The scenarios listed in `directory/scenarios.jsonl`, each output file checked to exist."""
    index = directory / INDEX_FILE
    try:
        lines = index.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise NiahFixtureError(
            f"cannot read {index}: {error.strerror}; pass --scenarios with a folder holding "
            f"{INDEX_FILE}"
        ) from None
    scenarios = [
        _scenario(directory, f"{index}:{number}", line)
        for number, line in enumerate(lines, 1)
        if line.strip()
    ]
    if not scenarios:
        raise NiahFixtureError(f"{index} lists no scenarios; add one JSON object per line")
    return scenarios


def _scenario(directory: Path, where: str, line: str) -> Scenario:
    try:
        data = json.loads(line)
        cases = tuple(
            NiahCase(str(case["case_id"]), str(case["query"]), tuple(map(str, case["needles"])))
            for case in data["cases"]
        )
        scenario = Scenario(
            id=str(data["id"]),
            tool=str(data["tool"]),
            command=str(data["command"]),
            path=directory / str(data["file"]),
            cases=cases,
        )
    except (ValueError, KeyError, TypeError) as error:
        raise NiahFixtureError(
            f"{where}: not a scenario ({error}); each line needs id, tool, command, file and "
            "cases [{case_id, query, needles}]"
        ) from None
    if not cases or any(not case.needles or not case.query.strip() for case in cases):
        raise NiahFixtureError(f"{where}: every scenario needs cases with a query and needles")
    if not scenario.path.is_file():
        raise NiahFixtureError(f"{where}: output file {scenario.path} is missing")
    return scenario


# --- running ---------------------------------------------------------------------------------


def run_niah(scenarios: list[Scenario], *, progress: Progress = None) -> dict[str, Any]:
    """Every question of every scenario through `execute_code`; the report as a plain dict."""
    from capy.api.execute import execute_code
    from capy.api.workspace import Workspace

    rows = []
    total = sum(len(scenario.cases) for scenario in scenarios)
    done = 0
    with throwaway_home() as root:
        project = root / "project"
        (project / ".capy").mkdir(parents=True)
        workspace = Workspace(project)
        for scenario in scenarios:
            code = f"cat {shlex.quote(str(scenario.path.resolve()))}"
            produced = scenario.path.stat().st_size
            for case in scenario.cases:
                reply = execute_code(workspace, language="shell", code=code, intent=case.query)
                rows.append(_measure(scenario, case, reply.text, produced, reply.is_error))
                done += 1
                if progress is not None:
                    progress("context reduction", done, total)
    return _report(scenarios, rows)


def _measure(
    scenario: Scenario, case: NiahCase, text: str, produced: int, is_error: bool
) -> dict[str, Any]:
    missed = [needle for needle in case.needles if needle not in text]
    returned = len(text.encode("utf-8"))
    return {
        "scenario": scenario.id,
        "case_id": case.case_id,
        "query": case.query,
        "produced_bytes": produced,
        "returned_bytes": returned,
        "kept_out": 1 - returned / produced if produced else 0.0,
        "needles": len(case.needles),
        "found": len(case.needles) - len(missed),
        "missed": missed,
        "tool_error": is_error,
    }


@contextmanager
def throwaway_home() -> Iterator[Path]:
    """A temp folder as HOME (config, key file, knowledge base), restored afterwards."""
    saved = {name: os.environ.get(name) for name in _HOME_VARIABLES}
    saved.update({name: value for name, value in os.environ.items() if name.startswith("CAPY_")})
    with tempfile.TemporaryDirectory(prefix="capy-niah-") as name:
        root = Path(name)
        try:
            for variable in [name for name in os.environ if name.startswith("CAPY_")]:
                del os.environ[variable]
            os.environ["HOME"] = str(root / "home")
            os.environ["XDG_CONFIG_HOME"] = str(root / "home" / ".config")
            os.environ["XDG_DATA_HOME"] = str(root / "home" / ".local" / "share")
            _forget_cached_rules()
            yield root
        finally:
            for variable, value in saved.items():
                if value is None:
                    os.environ.pop(variable, None)
                else:
                    os.environ[variable] = value
            _forget_cached_rules()


def _forget_cached_rules() -> None:
    """Rules are cached per process; overlays from the real HOME must not leak in, or out."""
    from capy.rules import ruleset

    ruleset._load_cached.cache_clear()


# --- report ----------------------------------------------------------------------------------


def _report(scenarios: list[Scenario], rows: list[dict[str, Any]]) -> dict[str, Any]:
    per_scenario = []
    for scenario in scenarios:
        mine = [row for row in rows if row["scenario"] == scenario.id]
        per_scenario.append({"scenario": scenario.id, "tool": scenario.tool, **_totals(mine)})
    overall = _totals(rows)
    goals = [
        {
            "goal": f"bytes kept out >= {GOAL_KEPT_OUT:.0%}",
            "value": overall["kept_out"],
            "met": overall["kept_out"] >= GOAL_KEPT_OUT,
        },
        {
            "goal": f"needle recall >= {GOAL_RECALL}",
            "value": overall["recall"],
            "met": overall["recall"] >= GOAL_RECALL,
        },
        {
            "goal": f"scenarios >= {GOAL_SCENARIOS}",
            "value": len(scenarios),
            "met": len(scenarios) >= GOAL_SCENARIOS,
        },
    ]
    return {
        "scenarios": len(scenarios),
        "questions": len(rows),
        "overall": overall,
        "per_scenario": per_scenario,
        "cases": rows,
        "goals": goals,
    }


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    produced = sum(row["produced_bytes"] for row in rows)
    returned = sum(row["returned_bytes"] for row in rows)
    needles = sum(row["needles"] for row in rows)
    found = sum(row["found"] for row in rows)
    return {
        "questions": len(rows),
        "produced_bytes": produced,
        "returned_bytes": returned,
        "kept_out": 1 - returned / produced if produced else 0.0,
        "worst_kept_out": min((row["kept_out"] for row in rows), default=0.0),
        "needles": needles,
        "found": found,
        "recall": found / needles if needles else 0.0,
    }


def niah_tables(report: dict[str, Any]) -> list[Table]:
    scenarios = Table(
        f"context reduction: {report['scenarios']} scenarios, {report['questions']} questions "
        "(measured on the exact reply text)",
        ("scenario", "tool", "KB produced", "bytes returned", "% kept out", "needles", "recall"),
    )
    for row in [*report["per_scenario"], {"scenario": "all", "tool": "", **report["overall"]}]:
        scenarios.rows.append(
            (
                row["scenario"],
                row["tool"],
                fmt(row["produced_bytes"] / row["questions"] / 1024, 1),
                str(row["returned_bytes"] // max(row["questions"], 1)),
                fmt(row["kept_out"] * 100, 1),
                f"{row['found']}/{row['needles']}",
                fmt(row["recall"]),
            )
        )
    scenarios.notes.append(
        "KB produced and bytes returned are per question; kept out = 1 - returned / produced, "
        f"summed over questions (worst single question: {report['overall']['worst_kept_out']:.1%})"
    )
    tables = [scenarios, goals_table("context-reduction goals", report["goals"])]
    missed = [(row["case_id"], needle) for row in report["cases"] for needle in row["missed"]]
    if missed:
        tables.append(Table(f"needles missed ({len(missed)})", ("question", "needle"), missed))
    return tables
