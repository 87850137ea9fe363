"""`capy bench hooks`: hook latency per payload as a ratio to a bare Python start."""

from __future__ import annotations

from pathlib import Path

from capy.cli.bench import JsonFlag, _emit


def hooks(*, runs: int = 30, json_output: JsonFlag = False, markdown: Path | None = None) -> int:
    """Time `capy hook` processes on representative payloads against `python -c pass`, each
    with capsule capture on and off in the same rounds.

    Parameters
    ----------
    runs
        Processes per payload (the median is reported); the baseline is interleaved with them.
    markdown
        Also write the tables as markdown to this file.
    """
    from capy.bench.hooks import run

    report = run(runs)
    return _emit(report, hooks_tables(report), json_output, markdown)


def hooks_tables(report: dict) -> list:
    from capy.bench.processes import ratio_table
    from capy.bench.report import Table, fmt, goals_table

    table = ratio_table(report, "hook latency", "payload")
    table.notes.append(f"command: {report['command']} --platform claude-code EVENT")
    in_process = Table(
        "in process: capy.hooks.handle (what a running server pays for an mcp_tool hook)",
        ("payload", "median ms"),
        [(row["name"], f"{row['median_ms']:.3f}") for row in report["in_process"]],
    )
    server = Table(
        "through a running capy serve: one capy_hook call over stdio (the mcp_tool hook path)",
        ("payload", "median ms", "x baseline"),
        [
            (
                row["name"],
                f"{row['median_ms']:.2f}",
                fmt(row["median_ms"] / report["baseline_ms"], 2),
            )
            for row in report["through_server"]
        ],
    )
    from capy.bench.hooks_capture import capture_table

    return [table, capture_table(report), in_process, server, goals_table("goal", report["goals"])]
