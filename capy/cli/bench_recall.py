"""`capy bench recall`: evidence recall of capsule recall on LoCoMo and real Claude Code
sessions, against a bare bm25 floor; `--scale` and `--rebuild` measure latency at size and
byte-identical briefs after a rebuild."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import REPO_ROOT, Flag, JsonFlag, _emit, _progress

TESTDATA = REPO_ROOT.parent / "shared" / "testdata"


def recall(
    *,
    budget: int = 1500,
    half: str | None = None,
    limit: int | None = None,
    locomo: Path | None = None,
    transcripts: Path | None = None,
    scale: int | None = None,
    reuse_scale: Flag = False,
    scale_only: Flag = False,
    hybrid: Flag = False,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
) -> int:
    """Recall every question of LoCoMo and of the Claude transcript set from imported capsules,
    and print evidence R@5, R@10, MRR, tokens per brief and latency beside a bm25 floor, per
    half and category; then the rebuild check (briefs byte-identical after a rebuild).

    Parameters
    ----------
    budget
        Token budget of each brief.
    half
        Only this half (dev or held); both by default.
    limit
        Only the first N questions of each half (a quick run, not a figure).
    locomo
        The LoCoMo JSON file (default: the shared test data's locomo-dev.json).
    transcripts
        The Claude transcripts folder (default: the shared test data's claude-transcripts).
    scale
        Also time recall over this many capsules (e.g. 100000): p50/p95 per query.
    reuse_scale
        Keep the `--scale` log in the cache folder and reuse it while nothing that shapes its
        rows changed (building 100,000 capsules takes minutes; recall is what is timed).
    scale_only
        Only the `--scale` timing: skip the two sets and the rebuild check.
    hybrid
        Also recall LoCoMo and the Claude transcript set lexical-only and hybrid (the semantic
        layer's vector list) side by side, in the same run, by half, beside the bm25 floor.
    markdown
        Also write the tables as markdown to this file.
    """
    from capy.bench.recall import run, tables
    from capy.bench.recall_checks import check_tables, rebuild_check
    from capy.bench.recall_scale import scale_check
    from capy.cli.output import error_line

    if half not in (None, "dev", "held"):
        error_line("--half is dev or held")
        return 2
    source = locomo or TESTDATA / "locomo" / "locomo-dev.json"
    folder = transcripts or TESTDATA / "claude-transcripts"
    if not source.is_file() and not folder.is_dir():
        error_line(
            f"no LoCoMo file at {source} and no transcripts at {folder}: "
            "pass --locomo FILE or --transcripts DIR"
        )
        return 2
    if scale_only and not scale:
        error_line("--scale-only needs --scale N")
        return 2
    halves = (half,) if half else ("dev", "held")
    with _progress(not json_output) as progress:
        if scale_only:
            report = {"benchmark": "recall", "budget_tokens": budget, "sets": {}, "goals": []}
        else:
            report = run(
                source, folder, budget=budget, halves=halves, limit=limit, progress=progress
            )
            report["rebuild"] = rebuild_check(source if source.is_file() else None, budget=budget)
        if scale:
            report["scale"] = scale_check(
                scale,
                source if source.is_file() else None,
                progress=progress,
                reuse=reuse_scale,
            )
        extra = []
        if hybrid:
            from capy.bench.recall_hybrid import hybrid_tables, run_claude_hybrid, run_locomo_hybrid

            report["hybrid"] = {}
            if source.is_file():
                report["hybrid"]["locomo"] = run_locomo_hybrid(
                    source, budget=budget, halves=halves, limit=limit, progress=progress
                )
            if folder.is_dir():
                report["hybrid"]["claude"] = run_claude_hybrid(
                    folder, budget=budget, halves=halves, limit=limit
                )
            extra += hybrid_tables(report["hybrid"])
    return _emit(report, tables(report) + check_tables(report) + extra, json_output, markdown)
