"""`capy bench peer`: capy beside context-mode on the same inputs, through MCP, as ratios."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import Flag, JsonFlag, _emit
from capy.cli.output import error_line


def peer(
    *,
    runs: int = 5,
    corpus: Path | None = None,
    files: int = 36,
    pattern: str = "*",
    queries_file: Path | None = None,
    queries: int | None = None,
    executes: int = 10,
    pause: float = 0.0,
    no_install: Flag = False,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    check: Flag = False,
) -> int:
    """Index, search, execute, start and memory of capy against context-mode, run by run.

    Installs context-mode from the npm registry into ~/.cache/capy-bench on first use; skipped,
    saying why, where Node.js, npm or the peer is missing.

    Parameters
    ----------
    runs
        Runs per server, alternating which goes first (medians are reported).
    corpus
        Folder whose largest text files are indexed (default: ../shared/testdata beside the
        repository).
    files
        How many of its largest text files to index.
    pattern
        Only files whose names match this glob, e.g. '*.md'.
    queries_file
        One query per line, written from the corpus (default: fixtures/bench/peer/queries.txt,
        written from ../shared/testdata).
    queries
        Use only the first N queries.
    executes
        `echo hi` calls per run.
    pause
        Seconds without calls after the timed ones, then the queries once more (untimed), so
        that the peak memory includes background work (capy's embedder starts only in a pause).
    no_install
        Skip instead of installing the peer when it is not in the cache.
    markdown
        Also write the tables as markdown to this file.
    check
        Exit with 1 when a goal is missed.
    """
    from capy.bench import peer as bench
    from capy.bench.peer_corpus import CorpusError
    from capy.bench.peer_session import ServerFailed

    if pause < 0:
        error_line("--pause takes 0 or more seconds")
        return 2
    if runs < 1 or files < 1 or executes < 1 or (queries is not None and queries < 1):
        error_line("--runs, --files, --executes and --queries must be positive; pick another")
        return 2
    try:
        report = bench.run(
            runs,
            corpus,
            files,
            queries,
            executes,
            install=not no_install,
            pattern=pattern,
            queries_file=queries_file,
            pause=pause,
        )
    except CorpusError as error:
        error_line(str(error))
        return 2
    except ServerFailed as error:
        error_line(f"{error}; run that server by hand to see its stderr")
        return 1
    code = _emit(report, bench.tables(report), json_output, markdown)
    goals = report.get("goals", [])
    return 1 if check and goals and not all(goal["met"] for goal in goals) else code
