"""capy beside context-mode (the TypeScript MCP server users pick instead), on the same inputs.

Both servers are driven the same way by the official Python SDK client over stdio (see
peer_session.py), run by run, alternating which goes first, each run on a fresh project and
home. Figures are medians over runs; the search and execute percentiles pool every call of
every run. Both servers' search throttles are lifted for the run (capy by a user rule overlay
in the scratch home, the peer by its documented environment variables): the bench sends one
query per call on purpose, and a throttled answer would time the refusal, not the search.

Goals (capy / peer in the same run): index throughput >= 1.2x; search p50 <= 0.8x; execute
<= 0.8x; search p95 <= 0.3x; peak memory below the peer's.

Beside the index figure the report gives capy's floor on the same files (`capy.bench.perf_floor`:
capy's own chunks of them inserted into its two FTS5 tables in ONE transaction, nothing else
timed; the best of the runs) and that floor over the peer's throughput. Where that ratio is
below the goal, no indexer writing capy's rows can reach the goal: the peer cuts a file with no
blank lines (JSON lines, logs) into one row, where capy cuts it into many, and an FTS5 table
pays per row and term (the trigram table most).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from capy.bench import peer_corpus, peer_install
from capy.bench.mcp_floors import UNTHROTTLED_CALLS, lift_search_throttle
from capy.bench.metrics import percentile
from capy.bench.peer_session import ServerFailed, SessionFigures, ToolShapes, run_session

CAPY = "capy"
PEER = "peer"
SHAPES = {
    CAPY: ToolShapes(index="capy_index", search="capy_search", execute="capy_execute"),
    PEER: ToolShapes(index="ctx_index", search="ctx_search", execute="ctx_execute"),
}
PEER_UNTHROTTLED = {
    "CONTEXT_MODE_SEARCH_WINDOW_MS": "1",
    "CONTEXT_MODE_SEARCH_MAX_RESULTS_AFTER": str(UNTHROTTLED_CALLS),
    "CONTEXT_MODE_SEARCH_BLOCK_AFTER": str(UNTHROTTLED_CALLS),
}
# (figure, key, goal as (comparison, ratio capy/peer) or None)
FIGURES = (
    ("index throughput, MB/s", "index_mb_s", (">=", 1.2)),
    ("search p50 per call, ms", "search_p50_ms", ("<=", 0.8)),
    ("search p95 per call, ms", "search_p95_ms", ("<=", 0.3)),
    ("execute `echo hi` per call, ms", "execute_ms", ("<=", 0.8)),
    ("server start (spawn to tools/list), ms", "start_ms", None),
    ("peak memory of the server tree, MB", "peak_rss_mb", ("<", 1.0)),
)
COMPARISONS = {
    ">=": lambda ratio, goal: ratio >= goal,
    "<=": lambda ratio, goal: ratio <= goal,
    "<": lambda ratio, goal: ratio < goal,
}


def run(
    runs: int = 5,
    corpus_root: Path | None = None,
    files: int = peer_corpus.DEFAULT_FILES,
    queries: int | None = None,
    executes: int = 10,
    install: bool = True,
    pattern: str = "*",
    queries_file: Path | None = None,
    pause: float = 0.0,
) -> dict:
    """The report dict; `{"skipped": reason}` when Node, npm or the peer is missing."""
    try:
        peer = peer_install.find_peer(install=install)
    except peer_install.PeerMissing as missing:
        return {"skipped": str(missing)}
    chosen_queries = peer_corpus.load_queries(queries_file or peer_corpus.QUERIES_FILE)[:queries]
    root = corpus_root or peer_corpus.DEFAULT_CORPUS
    scratch = Path(tempfile.mkdtemp(prefix="capy-bench-peer-"))
    try:
        corpus_dir = scratch / "corpus"
        corpus_dir.mkdir()
        corpus = peer_corpus.build_corpus(root, files, _source_cap(), corpus_dir, pattern)
        samples = _rounds(peer, scratch, max(1, runs), corpus, chosen_queries, executes, pause)
        floor_s = _floor_seconds(corpus, max(1, runs))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = _report(peer, runs, corpus, chosen_queries, executes, samples)
    peer_mb_s = report["results"][0]["peer"]
    floor_mb_s = report["corpus_bytes"] / 1e6 / floor_s
    floor = {
        "mb_s": floor_mb_s,
        "over_peer": floor_mb_s / peer_mb_s if peer_mb_s else None,
    }
    return {**report, "capy_floor": floor, "corpus": str(root / pattern), "pause_s": pause}


def _floor_seconds(corpus: list, runs: int) -> float:
    """capy's one-transaction floor on the corpus files, best of `runs`."""
    from capy.bench.perf_floor import capy_chunks, time_floor
    from capy.rules import build_ruleset
    from capy.store.batch import BatchItem

    ruleset = build_ruleset()
    items = [BatchItem(item.label, item.path.read_bytes()) for item in corpus]
    documents = [item.path.read_text(encoding="utf-8", errors="replace") for item in corpus]
    chunked = capy_chunks(items, ruleset)
    return min(time_floor(documents, chunked).wall for _ in range(runs))


def _source_cap() -> int:
    from capy.rules import build_ruleset

    return build_ruleset().view("retention").size.max_source_bytes


def _rounds(
    peer, scratch, runs, corpus, queries, executes, pause=0.0
) -> dict[str, list[SessionFigures]]:
    samples: dict[str, list[SessionFigures]] = {CAPY: [], PEER: []}
    for index in range(runs):
        order = (CAPY, PEER) if index % 2 == 0 else (PEER, CAPY)
        for name in order:
            folder = scratch / f"{name}-{index}"
            command, environ, project = _server(name, peer, folder)
            try:
                figures = run_session(
                    command,
                    environ,
                    project,
                    SHAPES[name],
                    corpus,
                    queries,
                    executes,
                    folder / "server.log",
                    pause_s=pause,
                )
            except ServerFailed as failed:
                raise ServerFailed(f"{_label(name, peer)}: {failed}") from None
            samples[name].append(figures)
            shutil.rmtree(folder, ignore_errors=True)  # each run starts from an empty store
    return samples


def _label(name: str, peer) -> str:
    return "capy" if name == CAPY else f"{peer.name} {peer.version}"


def _server(name: str, peer, folder: Path) -> tuple[list[str], dict[str, str], Path]:
    """(command, environment, project) for one fresh run of `name`."""
    from capy.bench import processes

    project, home, environ = processes.scratch_project(folder)
    if name == CAPY:
        lift_search_throttle(home / ".config")
        # `capy setup` leaves the parsed rule packs cached in the user's home; a bare fresh
        # home would time that one-off parse (seconds) inside the first index call instead.
        warm = [*processes.capy_command(), "rules", "hash"]
        subprocess.run(warm, env=environ, cwd=project, capture_output=True, check=False)
        command = [*processes.capy_command(), "serve", "--project", str(project)]
        return command, environ, project
    environ = peer_install.peer_environment(environ)
    environ.update(PEER_UNTHROTTLED, CONTEXT_MODE_PROJECT_DIR=str(project))
    return list(peer.command), environ, project


def _summary(figures: list[SessionFigures]) -> dict:
    searches = [ms for run in figures for ms in run.search_ms]
    executes = [ms for run in figures for ms in run.execute_ms]
    return {
        # Unrounded where a tiny run's figure would round to zero; the tables round.
        "index_mb_s": statistics.median(run.index_bytes / 1e6 / run.index_s for run in figures),
        "search_p50_ms": round(percentile(searches, 0.5), 2),
        "search_p95_ms": round(percentile(searches, 0.95), 2),
        "execute_ms": round(percentile(executes, 0.5), 2),
        "start_ms": round(statistics.median(run.start_ms for run in figures), 1),
        "peak_rss_mb": round(statistics.median(run.peak_rss_bytes / 1e6 for run in figures), 1),
        "tools": figures[0].tools,
    }


def _per_file(figures: list[SessionFigures]) -> list[float]:
    """Median milliseconds per corpus file over the runs, in corpus order."""
    per_file = zip(*(run.index_ms for run in figures), strict=True)
    return [round(statistics.median(samples), 1) for samples in per_file]


def _report(peer, runs, corpus, queries, executes, samples) -> dict:
    capy, other = _summary(samples[CAPY]), _summary(samples[PEER])
    rows, goals = [], []
    for label, key, goal in FIGURES:
        ratio = capy[key] / other[key] if other[key] else None
        rows.append({"figure": label, "capy": capy[key], "peer": other[key], "ratio": ratio})
        if goal is not None:
            comparison, bound = goal
            met = ratio is not None and COMPARISONS[comparison](ratio, bound)
            wording = f"capy/peer {label.split(',')[0]} {comparison} {bound:g}"
            goals.append({"goal": wording, "value": ratio, "met": met})
    return {
        "peer": f"{peer.name} {peer.version}",
        "peer_command": f"node {peer_install.PEER_ENTRY}",
        "runs": runs,
        "files": len(corpus),
        "corpus_bytes": sum(item.size for item in corpus),
        "queries": len(queries),
        "executes": executes,
        "python": Path(sys.executable).name,
        "results": rows,
        "goals": goals,
        "tools": {CAPY: capy["tools"], PEER: other["tools"]},
        "index_ms_per_file": {name: _per_file(figures) for name, figures in samples.items()},
        "unset_for_peer": peer_install.SLOW_NODE_VARIABLE,
    }


def tables(report: dict) -> list:
    from capy.bench.report import Table, fmt, goals_table, skipped_table

    if "skipped" in report:
        return [skipped_table("capy beside context-mode", report["skipped"])]
    table = Table(
        f"capy beside {report['peer']}, medians of {report['runs']} alternating runs",
        ("figure", "capy", "peer", "capy / peer"),
        [
            (row["figure"], fmt(row["capy"], 2), fmt(row["peer"], 2), fmt(row["ratio"], 2))
            for row in report["results"]
        ],
    )
    table.notes.extend(
        [
            f"peer: {report['peer']} from the npm registry, run as `{report['peer_command']}`; "
            f"{report['unset_for_peer']} unset for it (it slows every Node start here)",
            f"inputs: the {report['files']} largest text files under {report['corpus']}, "
            f"{report['corpus_bytes'] / 1e6:.2f} MB indexed "
            f"one call per file; {report['queries']} queries, one per call; "
            f"{report['executes']} `echo hi` calls per run",
            "both through the official Python MCP SDK client over stdio, fresh project and "
            "home each run, search throttles lifted on both; capy's home holds the parsed rule "
            "packs, as `capy setup` leaves it (built untimed before the server starts)",
            "peak memory: resident set of the server's whole process tree, polled"
            + (
                f", through a {report['pause_s']:g} s pause without calls after the timed ones "
                "(capy's background embedder works only then) and the queries once more, untimed"
                if report.get("pause_s")
                else "; the calls come back to back, so capy's background embedder (which waits "
                "for a pause) never loads its model: --pause measures that too"
            ),
        ]
    )
    floor = report.get("capy_floor")
    if floor:
        table.notes.append(
            f"capy's floor on these files (its own chunks into its two FTS5 tables, one "
            f"transaction, nothing else timed): {floor['mb_s']:.2f} MB/s, "
            f"{fmt(floor['over_peer'], 2)}x the peer's index throughput"
        )
    return [table, goals_table("goals against the peer", report["goals"])]
