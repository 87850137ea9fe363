"""`capy bench ...`: print benchmark figures as a table, or JSON with --json."""

from __future__ import annotations

from typing import Annotated

from cyclopts import App, Parameter

from capy.cli.output import console, print_json

app = App(name="bench", help="Measure capy and print the figures.")


@app.command
def rules(*, runs: int = 15, json_output: Annotated[bool, Parameter(name="--json")] = False) -> int:
    """Time loading the rule packs, cold and warm, as a ratio to a bare YAML parse.

    Parameters
    ----------
    runs
        Repetitions per measurement (the median is reported).
    """
    from capy.bench.rules import run

    report = run(runs)
    if json_output:
        print_json(report)
        return 0
    from rich.table import Table

    table = Table(title=f"rule packs (baseline: {report['baseline']})")
    for column in ("measurement", "median ms", "p95 ms", "runs", "x baseline"):
        table.add_column(column)
    for row in report["results"]:
        table.add_row(
            row["name"],
            f"{row['median_ms']:.2f}",
            f"{row['p95_ms']:.2f}",
            str(row["runs"]),
            f"{row['ratio_to_baseline']:.2f}",
        )
    console().print(table)
    return 0
