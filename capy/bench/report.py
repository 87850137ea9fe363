"""Benchmark reports as tables: one shape (`Table`) rendered with rich or as markdown.

Each benchmark returns a plain dict (what `--json` prints); the `*_tables` functions here turn
one into the tables a person reads, so the terminal and the markdown file always agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MISSING = "–"
_NUMBER = re.compile(r"[-+]?[\d,]*\.?\d+")


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def goals_table(title: str, goals: Sequence[dict]) -> Table:
    rows = [(g["goal"], fmt(g["value"]), "met" if g["met"] else "MISSED") for g in goals]
    return Table(title, ("goal", "measured", "status"), rows)


def print_tables(tables: Iterable[Table]) -> None:
    """Rich tables on a terminal; markdown otherwise. Piped or redirected, rich would cut every
    table to 80 columns and print figures as "0.…", so a saved report lost its numbers."""
    from capy.cli.tables import on_terminal

    if not on_terminal():
        print(markdown(tables), end="")
        return
    from rich.table import Table as RichTable

    from capy.cli.output import console

    out = console()
    for table in tables:
        rich_table = RichTable(title=table.title, title_justify="left")
        for index, column in enumerate(table.columns):
            rich_table.add_column(column, justify="right" if _numeric(table, index) else "left")
        for row in table.rows:
            rich_table.add_row(*row)
        out.print(rich_table)
        for note in table.notes:
            out.print(f"  {note}", soft_wrap=True)


def markdown(tables: Iterable[Table]) -> str:
    parts = []
    for table in tables:
        lines = [f"### {table.title}", ""]
        lines.append("| " + " | ".join(table.columns) + " |")
        aligns = ["---:" if _numeric(table, i) else "---" for i in range(len(table.columns))]
        lines.append("| " + " | ".join(aligns) + " |")
        lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows)
        if table.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in table.notes)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _numeric(table: Table, index: int) -> bool:
    """Figures align right, words left."""
    cells = [row[index] for row in table.rows]
    return bool(cells) and all(_NUMBER.fullmatch(cell) or cell == MISSING for cell in cells)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---- per benchmark -------------------------------------------------------------------------

RECALL_KEYS = ("r@1", "r@3", "r@5", "r@10", "mrr", "ndcg@10")
MAX_FAILURES_SHOWN = 15


def quality_tables(report: dict) -> list[Table]:
    groups = report["groups"]
    ranking = Table(
        f"search quality on needle fixtures (limit {report['limit']})",
        ("group", "cases", "R@1", "R@3", "R@5", "R@10", "MRR", "nDCG@10"),
    )
    for row in groups:
        ranking.rows.append(
            (row["group"], str(row["positives"]), *(fmt(row[key]) for key in RECALL_KEYS))
        )
    ranking.notes.append(
        "rank = that of the first hit whose full content holds every needle (the one relevant "
        "hit); nDCG@10 = 1/log2(1 + rank); MRR counts the top 10 only"
    )
    layers = sorted({name for row in groups for name in row["layers"]})
    outcome = Table(
        "ceilings, negatives, and the layer that found each hit",
        ("group", "in ceiling", "neg", "neg empty", *layers),
    )
    for row in groups:
        outcome.rows.append(
            (
                row["group"],
                fmt(row["within_ceiling"]),
                str(row["negatives"]),
                fmt(row["negative_pass"]),
                *(str(row["layers"].get(name, 0)) for name in layers),
            )
        )
    tables = [ranking, outcome, goals_table("quality goals", report["goals"])]
    failures = report["failures"]
    if failures:
        shown = Table(f"failing cases ({len(failures)})", ("case", "why", "query"))
        shown.rows.extend(
            (f["case_id"], f["why"], f["query"]) for f in failures[:MAX_FAILURES_SHOWN]
        )
        if len(failures) > MAX_FAILURES_SHOWN:
            shown.notes.append(f"{len(failures) - MAX_FAILURES_SHOWN} more in --json")
        tables.append(shown)
    return tables


def trec_tables(report: dict) -> list[Table]:
    table = Table(
        f"TREC {report['collection']}: {report['documents']} documents, "
        f"{report['judged_topics']} judged topics",
        ("system", "nDCG@10", "MAP@100", "MAP@1000", "P@10", "index s", "ms/query"),
    )
    for system in report["systems"]:
        table.rows.append(
            (
                system["system"],
                fmt(system["ndcg@10"], 4),
                fmt(system["map@100"], 4),
                fmt(system.get("map@1000"), 4),
                fmt(system["p@10"], 4),
                fmt(system["index_s"], 2),
                fmt(system["query_ms_mean"], 2),
            )
        )
    table.notes.append(
        f"capy / floor: nDCG@10 x{fmt(report['ratio_ndcg@10'])}, "
        f"MAP@100 x{fmt(report['ratio_map@100'])} (same documents, same run)"
    )
    return [table, goals_table("TREC goal", report["goals"])]


def skipped_table(title: str, reason: str) -> Table:
    return Table(title, ("skipped",), [(reason,)])


def rules_tables(report: dict) -> list[Table]:
    table = Table(
        f"rule packs (baseline: {report['baseline']})",
        ("measurement", "median ms", "p95 ms", "runs", "x baseline"),
    )
    for row in report["results"]:
        table.rows.append(
            (
                row["name"],
                f"{row['median_ms']:.2f}",
                f"{row['p95_ms']:.2f}",
                str(row["runs"]),
                fmt(row["ratio_to_baseline"], 2),
            )
        )
    return [table]


def executor_tables(report: dict) -> list[Table]:
    table = Table(
        f"executor overhead per call (median of {report['runs']} runs; bare = subprocess.run)",
        ("language", "bare ms", "capy ms", "overhead ms", "x bare", "goal"),
    )
    for row in report["results"]:
        table.rows.append(
            (
                row["language"],
                f"{row['bare']['median_ms']:.2f}",
                f"{row['capy']['median_ms']:.2f}",
                f"{row['overhead_ms']:.2f}",
                fmt(row["ratio"], 2),
                f"<= {report['goal_ratio']}",
            )
        )
    table.notes.extend(f"skipped {s['language']}: {s['reason']}" for s in report["skipped"])
    return [table]


def redaction_tables(report: dict) -> list[Table]:
    table = Table(
        f"redaction of {report['input_mb']} MB of typical log text, {report['detectors']} "
        f"detectors (baseline: {report['baseline']})",
        ("measurement", "median ms", "p95 ms", "MB/s", "ms per MB", "x baseline"),
    )
    for row in report["results"]:
        table.rows.append(
            (
                row["name"],
                f"{row['median_ms']:.1f}",
                f"{row['p95_ms']:.1f}",
                fmt(row["mb_per_s"], 2),
                fmt(row["ms_per_mb"], 1),
                fmt(row["speedup"], 2),
            )
        )
    table.notes.append("goal: 1 MB in under 50 ms")
    return [table]


def perf_tables(report: dict) -> list[Table]:
    indexing = Table(
        "indexing throughput (best of "
        f"{report['settings']['rounds']} rounds; floor = the same chunks into both FTS5 tables "
        "+ raw into a plain table, one transaction, SQLCipher)",
        ("content type", "MB", "chunks", "capy MB/s", "floor MB/s", "x floor", "x floor CPU"),
    )
    for row in report["indexing"]:
        if "files" in row:
            indexing.notes.append(
                f"real text: {row['files']} files, {row['bytes'] / 1e6:.2f} MB (shared test data "
                "and standard library modules), content type detected"
            )
        indexing.rows.append(
            (
                row["content_type"],
                fmt(row["bytes"] / 1e6, 2),
                str(row["chunks"]),
                fmt(row["capy_mb_s"], 2),
                fmt(row["bare_mb_s"], 2),
                fmt(row["ratio"], 2),
                fmt(row.get("cpu_ratio"), 2),
            )
        )
    indexing.notes.append(
        "x floor CPU: the same ratio in CPU seconds of this process (best round of each), "
        "which other load on the machine moves far less than the wall time"
    )
    latency = Table(
        "search latency (search_store, limit 10; bare = FTS5 AND query ranked by bm25; each "
        "query's median of the passes)",
        (
            "chunks",
            "queries",
            "p50 ms",
            "p95 ms",
            "max ms",
            "bare p50",
            "bare p95",
            "CPU p95",
            "bare CPU p95",
            "build s",
        ),
    )
    for row in report["latency"]:
        latency.rows.append(
            (
                f"{row['chunks']:,}",
                str(row["queries"]),
                fmt(row["p50_ms"], 2),
                fmt(row["p95_ms"], 2),
                fmt(row["max_ms"], 2),
                fmt(row["bare_p50_ms"], 2),
                fmt(row["bare_p95_ms"], 2),
                fmt(row.get("cpu_p95_ms"), 2),
                fmt(row.get("bare_cpu_p95_ms"), 2),
                fmt(row["build_s"], 1),
            )
        )
        bare_shapes = row.get("bare_p95_ms_by_shape", {})
        shapes = ", ".join(
            f"{k} {v:.1f}" + (f" (bare {bare_shapes[k]:.1f})" if k in bare_shapes else "")
            for k, v in row["p95_ms_by_shape"].items()
        )
        built = f" (store built by {row['built']})" if row.get("built") else ""
        latency.notes.append(
            f"{row['chunks']:,} chunks{built}, p95 ms by query shape: {shapes}; first pass "
            f"alone: p95 {row['first_pass_p95_ms']:.1f}, bare p95 "
            f"{row['bare_first_pass_p95_ms']:.1f}"
        )
        if row.get("through_calls"):
            through = row["through_calls"]
            latency.notes.append(
                f"{row['chunks']:,} chunks through the tool call ({through['calls']} capy_search "
                f"calls over MCP stdio): p50 {through['call_p50_ms']:.1f}, p95 "
                f"{through['call_p95_ms']:.1f} ms; floor (bare FTS5 + a bare SDK call) p50 "
                f"{through['call_floor_p50_ms']:.1f}, p95 {through['call_floor_p95_ms']:.1f} ms"
            )
    latency.notes.append(
        "CPU p95: the same queries in CPU ms of the searching thread (capy's and bare's), "
        "which other load on the machine moves far less than the wall time"
    )
    tables = [indexing, latency, goals_table("performance goals", report["goals"])]
    if report.get("calls"):
        from capy.bench.perf_calls import calls_tables

        tables[2:2] = calls_tables(report["calls"])[:-1]  # its goals are in the goals table
    return tables


def _terminal_table(terminal: dict, summary: Table) -> Table:
    summary.rows.append(
        (
            "control sequences planted / printed raw",
            str(terminal["planted"]),
            str(terminal["printed_raw"]),
            "0",
        )
    )
    detail = Table(
        "control sequences per human command (OSC, CSI, C1, bidi)",
        ("where", "planted", "printed raw", "lines shown"),
    )
    detail.rows.extend(
        (row["where"], str(row["planted"]), str(row["printed_raw"]), str(row["seen"]))
        for row in terminal["rows"]
    )
    detail.notes.extend(
        f"{row['where']}: {', '.join(row['raw'])}" for row in terminal["rows"] if row["raw"]
    )
    return detail


def hostile_tables(report: dict) -> list[Table]:
    from capy.bench.hostile import controls

    summary = Table(
        "hostile: tried / bad (goal: every bad count 0)" + (" [quick]" if report["quick"] else ""),
        ("figure", "tried", "bad", "goal"),
    )
    tables = [summary]
    if "escape" in report:
        escape = report["escape"]
        summary.rows.append(
            ("escape attempts tried / survived", str(escape["tried"]), str(escape["survived"]), "0")
        )
        detail = Table(
            "escape attempts by path (survived the call / survived capy's exit)",
            ("path", "mode", "tried", "survived call", "survived exit", "never started"),
        )
        for row in escape["rows"]:
            detail.rows.append(
                (
                    row["path"],
                    row["mode"],
                    str(row["tried"]),
                    str(row["survived_call"]),
                    str(row["survived_exit"]),
                    str(row["never_started"]),
                )
            )
        survivors = sorted({name for row in escape["rows"] for name in row["survivors"]})
        if survivors:
            detail.notes.append("surviving attempts: " + ", ".join(survivors))
        detail.notes.extend(escape["skipped"] + escape["errors"][:5])
        tables.append(detail)
    if "secrets" in report:
        found = report["secrets"]
        summary.rows.append(
            (
                "secrets planted / returned raw",
                str(found["planted"]),
                str(found["returned_raw"]),
                "0",
            )
        )
        detail = Table(
            f"secrets per tool ({len(found['detectors'])} detector kinds, fresh random bodies)",
            ("where", "planted", "returned raw", "reply seen"),
        )
        detail.rows.extend(
            (row["where"], str(row["planted"]), str(row["returned_raw"]), fmt(row["reached"]))
            for row in found["rows"]
        )
        detail.notes.append("kinds: " + ", ".join(found["detectors"]))
        tables.append(detail)
    if "inputs" in report:
        inputs = report["inputs"]
        for label, key in (
            ("bad inputs tried / tracebacks", "tracebacks"),
            ('bad inputs tried / "internal error"', "internal_errors"),
            ("bad inputs tried / hangs", "hangs"),
            ("bad inputs tried / work lost", "work_lost"),
        ):
            summary.rows.append((label, str(inputs["tried"]), str(inputs[key]), "0"))
        detail = Table(
            "bad inputs by group",
            ("group", "tried", "tracebacks", "internal error", "hangs", "work lost"),
        )
        detail.rows.extend(
            (
                row["group"],
                str(row["tried"]),
                str(row["tracebacks"]),
                str(row["internal_errors"]),
                str(row["hangs"]),
                str(row["work_lost"]),
            )
            for row in inputs["rows"]
        )
        if "slowest_finished" in inputs:
            slowest, limits = inputs["slowest_finished"], inputs["deadlines"]
            said = ", ".join(f"{kind} {limit:g} s".strip() for kind, limit in limits.items())
            detail.notes.append(
                f"hang deadlines: {said} (cold start {inputs.get('cold_start', 0):g} s); "
                f"slowest finished run: {slowest['seconds']:g} s ({slowest['case']})"
            )
        detail.notes.extend(inputs.get("skipped", []))
        detail.notes.extend(f"{bad['why']}: {bad['case']}" for bad in inputs["bad"][:40])
        tables.append(detail)
    if "terminal" in report:
        tables.append(_terminal_table(report["terminal"], summary))
    if "ssrf" in report:
        ssrf = report["ssrf"]
        summary.rows.append(
            ("SSRF forms tried / reached loopback", str(ssrf["tried"]), fmt(ssrf["reached"]), "0")
        )
        if "overlay" in ssrf:
            summary.notes.append(
                f"SSRF: {fmt(ssrf['overlay']['reached'])} of the {ssrf['overlay']['tried']} "
                "forms reached loopback in a project whose .capy/rules overlay disables the guard"
            )
        detail = Table("SSRF forms by origin", ("origin", "tried", "reached"))
        detail.rows.extend(
            (row["origin"], str(row["tried"]), str(row["reached"])) for row in ssrf["rows"]
        )
        detail.notes.extend(ssrf.get("skipped", []))
        detail.notes.extend(f"reached: {url}" for url in ssrf.get("reached_forms", [])[:20])
        if ssrf.get("error"):
            detail.notes.append(ssrf["error"])
        tables.append(detail)
    if "crash" in report:
        crash = report["crash"]
        summary.rows.append(
            ("kill -9 runs / stores damaged", str(crash["runs"]), str(crash["damaged"]), "0")
        )
        summary.notes.extend(
            f"kill -9 run {row['run']} (after {row['killed_after_s']} s): {row['why']}"
            for row in crash["details"]
        )
    if "spawner" in report:
        from capy.bench.hostile_spawner import spawner_table

        tables.append(spawner_table(report["spawner"], summary))
    if "reach" in report:
        from capy.bench.hostile_reach import reach_table

        tables.append(reach_table(report["reach"], summary))
    from capy.bench.hostile import FAMILIES

    spent = [f"{family} {report[family]['seconds']} s" for family in FAMILIES if family in report]
    summary.notes.append("wall time: " + ", ".join(spent))
    seen = controls(report)
    blind = [family for family, ok in seen.items() if not ok]
    summary.notes.append(
        "controls (a deliberately bad case per family, must count as bad): "
        + ("all seen" if not blind else "NOT SEEN for " + ", ".join(blind) + ": figures void")
    )
    return [*tables, goals_table("hostile goals", report["goals"])]
