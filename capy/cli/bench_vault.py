"""`capy bench vault`: the vault's import, compression, search and reindex figures."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import REPO_ROOT, JsonFlag, _emit, _progress

DEFAULT_TRANSCRIPTS = REPO_ROOT.parent / "shared" / "testdata" / "claude-transcripts"


def vault(
    *,
    runs: int = 5,
    sessions: int = 1000,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    transcripts: Path | None = None,
) -> int:
    """Import throughput, zstd compression, search latency p50/p95 and reindex throughput.

    Parameters
    ----------
    runs
        Imports of the real transcripts (the median is reported).
    sessions
        Sessions generated (by varying the real ones) for the search and reindex figures.
    markdown
        Also write the table as markdown to this file.
    transcripts
        Folder of real Claude Code transcripts (default: the shared test data's).
    """
    from capy.bench.vault import run, vault_tables
    from capy.cli.output import error_line

    if runs < 1 or sessions < 1:
        error_line("--runs and --sessions must be at least 1")
        return 2
    with _progress(not json_output) as progress:
        report = run(
            transcripts or DEFAULT_TRANSCRIPTS, runs=runs, sessions=sessions, progress=progress
        )
    return _emit(report, vault_tables(report), json_output, markdown)
