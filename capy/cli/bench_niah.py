"""`capy bench niah`: bytes kept out of the agent's context, and needle recall, per scenario."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

from capy.cli.bench import REPO_ROOT, JsonFlag, _emit, _progress
from capy.cli.output import error_line

DEFAULT_SCENARIOS = REPO_ROOT / "fixtures" / "bench" / "niah"
DEFAULT_REAL_SET = REPO_ROOT / "fixtures" / "niah-real"


def niah(
    *,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    scenarios: Path | None = None,
    set: Literal["generated", "real"] = "generated",
    half: Literal["dev", "held", "all"] = "all",
) -> int:
    """Run tool outputs through capy_execute with an intent and measure the reply.

    Parameters
    ----------
    markdown
        Also write the tables as markdown to this file.
    scenarios
        Folder holding the set (default: fixtures/bench/niah for the generated set, whose
        scenarios.jsonl names its outputs; fixtures/niah-real for the real one, whose set.yaml
        does).
    set
        generated: capy's own generated scenarios, one step. real: captured outputs of real
        tools with questions written before any reply, per half, in one step and in two
        (execute, then capy_search with the intent).
    half
        With --set real: run only the dev or the held-back half.
    """
    if set == "real":
        return _real(json_output, markdown, scenarios or DEFAULT_REAL_SET, half)
    from capy.bench.niah import NiahFixtureError, load_scenarios, niah_tables, run_niah

    try:
        loaded = load_scenarios(scenarios or DEFAULT_SCENARIOS)
    except NiahFixtureError as error:
        error_line(error.message)
        return 2
    with _progress(not json_output) as progress:
        report = run_niah(loaded, progress=progress)
    return _emit(report, niah_tables(report), json_output, markdown)


def _real(json_output: bool, markdown: Path | None, folder: Path, half: str) -> int:
    from capy.bench.niah_real import real_tables, run_real
    from capy.bench.niah_real_set import RealSetError, load_real_set

    try:
        real_set = load_real_set(folder)
    except RealSetError as error:
        error_line(error.message)
        return 2
    if half != "all":
        real_set = replace(
            real_set, outputs=tuple(out for out in real_set.outputs if out.half == half)
        )
    with _progress(not json_output) as progress:
        report = run_real(real_set, progress=progress)
    return _emit(report, real_tables(report), json_output, markdown)
