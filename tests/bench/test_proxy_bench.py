"""`capy bench proxy` runs end to end in seconds: both arms timed, every message recorded once,
the chain verified, and the tables a person reads."""

from __future__ import annotations

from capy.bench.proxy import proxy_tables, run


def test_a_short_proxy_bench_prints_its_figures_and_counts_the_capsules():
    report = run(rounds=6)
    assert [row["reply"] for row in report["rows"]] == [
        "JSON reply (whole)",
        "streamed (first chunk)",
    ]
    for row in report["rows"]:
        assert row["direct"]["p50_ms"] > 0 and row["proxy"]["p50_ms"] > 0
    recorded = report["recorded"]
    assert recorded["capsules"] == recorded["distinct"] == recorded["expected"] == 2 + 1 + 2 * 6
    assert recorded["chain_ok"] and report["stopped_cleanly"] and report["logged_lines"] == 0
    titles = [table.title for table in proxy_tables(report)]
    assert titles[0].startswith("capy proxy against the upstream directly, 6 alternating rounds")
