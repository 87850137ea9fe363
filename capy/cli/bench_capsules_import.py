"""`capy bench capsules-import`: bulk-import throughput of the capsule log against a raw floor."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import REPO_ROOT, JsonFlag, _emit, _progress

DEFAULT_LOCOMO = REPO_ROOT.parent / "shared" / "testdata" / "locomo" / "locomo-dev.json"


def capsules_import(
    *,
    capsules: int = 10_000,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    locomo: Path | None = None,
) -> int:
    """Import real conversation turns as capsules (JSONL, the whole import path) and print
    capsules/s beside a raw one-transaction insert of the same rows, per half of the set.

    Parameters
    ----------
    capsules
        Capsules imported per half (the turns repeat as further sessions to reach it).
    markdown
        Also write the table as markdown to this file.
    locomo
        The LoCoMo JSON file (default: the shared test data's locomo-dev.json).
    """
    from capy.bench.capsules_import import run, tables
    from capy.cli.output import error_line

    source = locomo or DEFAULT_LOCOMO
    if capsules < 1:
        error_line("--capsules must be at least 1")
        return 2
    if not source.is_file():
        error_line(f"no LoCoMo file at {source}: pass --locomo FILE (locomo10.json or a part)")
        return 2
    with _progress(not json_output) as progress:
        report = run(source, capsules=capsules, progress=progress)
    return _emit(report, tables(report), json_output, markdown)
