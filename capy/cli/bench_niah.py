"""`capy bench niah`: bytes kept out of the agent's context, and needle recall, per scenario."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import REPO_ROOT, JsonFlag, _emit, _progress
from capy.cli.output import error_line

DEFAULT_SCENARIOS = REPO_ROOT / "fixtures" / "bench" / "niah"


def niah(
    *, json_output: JsonFlag = False, markdown: Path | None = None, scenarios: Path | None = None
) -> int:
    """Run realistic tool outputs through capy_execute with an intent and measure the reply.

    Parameters
    ----------
    markdown
        Also write the tables as markdown to this file.
    scenarios
        Folder holding scenarios.jsonl and the outputs it names (default: the repository's
        fixtures/bench/niah).
    """
    from capy.bench.niah import NiahFixtureError, load_scenarios, niah_tables, run_niah

    try:
        loaded = load_scenarios(scenarios or DEFAULT_SCENARIOS)
    except NiahFixtureError as error:
        error_line(error.message)
        return 2
    with _progress(not json_output) as progress:
        report = run_niah(loaded, progress=progress)
    return _emit(report, niah_tables(report), json_output, markdown)
