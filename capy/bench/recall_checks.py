"""The two checks beside `capy bench recall`'s figures:

- rebuild: one conversation's capsules, briefs for a fixed query set (its first questions),
  every derived table dropped and rebuilt by the pipeline, the briefs again: how many are
  byte-identical.
- scale (`capy.bench.recall_scale`): LoCoMo turns repeated as further sessions up to N
  capsules, drained by the pipeline, then recall timed per question (p50, p95), no reranker.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

REBUILD_CONVERSATION = "conv-26"
REBUILD_QUERIES = 40


def rebuild_check(locomo: Path | None, *, budget: int) -> dict[str, Any]:
    from capy.bench.recall import fresh_store, load_and_drain, locomo_drafts
    from capy.bench.recall_locomo import SCOPE_PREFIX, load_locomo
    from capy.capsules.pipeline import drain, rebuild
    from capy.capsules.recall import recall_brief
    from capy.rules import load_rules

    if locomo is None:
        return {"skipped": "no LoCoMo file"}
    turns, questions = load_locomo(locomo)
    turns = [turn for turn in turns if turn.conversation == REBUILD_CONVERSATION]
    asked = [q.question for q in questions if q.conversation == REBUILD_CONVERSATION]
    asked = asked[:REBUILD_QUERIES]
    project = SCOPE_PREFIX + REBUILD_CONVERSATION
    with tempfile.TemporaryDirectory(prefix="capy-bench-rebuild-") as folder:
        store = fresh_store(Path(folder) / "rebuild.db", load_rules())
        with store:
            load_and_drain(store, locomo_drafts(turns))
            before = [recall_brief(store, q, budget_tokens=budget, project=project) for q in asked]
            enqueued = rebuild(store)
            drain(store)
            after = [recall_brief(store, q, budget_tokens=budget, project=project) for q in asked]
    same = sum(a == b for a, b in zip(before, after, strict=True))
    return {"queries": len(asked), "identical": same, "jobs_rebuilt": enqueued}


def check_tables(report: dict[str, Any]) -> list:
    from capy.bench.report import Table

    out = []
    rebuilt = report.get("rebuild")
    if rebuilt is not None:  # absent with --scale-only
        table = Table(
            "rebuild: derived tables dropped and rebuilt", ("queries", "identical briefs", "jobs")
        )
        if "skipped" in rebuilt:
            table.notes.append(f"skipped: {rebuilt['skipped']}")
        else:
            table.rows.append(
                (str(rebuilt["queries"]), str(rebuilt["identical"]), str(rebuilt["jobs_rebuilt"]))
            )
        out.append(table)
    scale = report.get("scale")
    if scale and "skipped" not in scale:
        size = Table(
            f"recall at scale ({scale['capsules']:,} capsules, every scope, no reranker)",
            (
                "queries",
                "import s",
                "drain s",
                "first ms",
                "p50 ms",
                "p95 ms",
                "CPU p50 ms",
                "CPU p95 ms",
                "queued p50 / p95 ms",
                "slept p50 / p95 ms",
                "p95 less queued ms",
                "goal p95 ms",
                "met",
            ),
        )
        size.rows.append(
            (
                str(scale["queries"]),
                str(scale["import_seconds"]),
                str(scale["drain_seconds"]),
                str(scale.get("first_ms")),
                str(scale["p50_ms"]),
                str(scale["p95_ms"]),
                str(scale.get("cpu_p50_ms")),
                str(scale.get("cpu_p95_ms")),
                f"{scale.get('queued_p50_ms')} / {scale.get('queued_p95_ms')}",
                f"{scale.get('slept_p50_ms')} / {scale.get('slept_p95_ms')}",
                str(scale.get("unqueued_p95_ms")),
                str(scale["goal_ms"]),
                "yes" if scale["met"] else "no",
            )
        )
        size.notes.append(
            f"{scale['scopes']} scopes; {scale.get('jobs', 0):,} pipeline jobs drained by one "
            f"drain of every stage ({', '.join(scale['stages'])}); the repeated turns' vectors "
            "come from the benchmarks' vector cache; CPU ms is the process's CPU time per "
            "recall after the first (every thread), which a busy machine does not inflate; "
            "queued ms is the recalling thread's time runnable but waiting for a CPU (Linux "
            "schedstat: a busy machine's run queue), slept ms its wall time neither running "
            "nor queued (disk, locks, the query's embedding on its own thread); p95 less queued is "
            "the p95 of each recall's wall time less its wait for a CPU (the goal is wall p95)"
        )
        if scale.get("reused"):
            size.notes.append(
                "the log was reused from the cache (--reuse-scale): import and drain seconds "
                "are those of the run that built it"
            )
        out.append(size)
    return out
