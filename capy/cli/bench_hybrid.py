"""`capy bench hybrid-latency`: search p95 with and without the semantic layer's vector list."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import JsonFlag, _emit, _progress


def hybrid_latency(
    *,
    size: int = 100_000,
    queries: int = 200,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
) -> int:
    """Search latency on one store of generated chunks, lexical-only and then with a vector for
    every chunk (goal: hybrid p95 within 1.3x of lexical-only at 100,000 chunks).

    Parameters
    ----------
    size
        Chunks in the store.
    queries
        Queries timed (each the median of three passes).
    markdown
        Also write the table as markdown to this file.
    """
    from capy.bench.hybrid_latency import latency_table, run_hybrid_latency
    from capy.cli.output import error_line

    if size < 1 or queries < 10:
        error_line("--size must be positive and --queries at least 10")
        return 2
    with _progress(not json_output) as progress:
        report = run_hybrid_latency(size, queries, progress=progress)
    return _emit({"hybrid_latency": report}, [latency_table(report)], json_output, markdown)
