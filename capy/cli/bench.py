"""`capy bench ...`: benchmark figures as tables, as JSON (--json), as markdown (--markdown)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from capy.cli.output import error_line, print_json

app = App(name="bench", help="Measure capy and print the figures.")

# Benchmarks that live in their own modules, imported only when run.
app.command(
    "capy.cli.bench_niah:niah",
    name="niah",
    help="Bytes kept out of context and needle recall on realistic tool outputs.",
)
app.command(
    "capy.cli.bench_vault:vault",
    name="vault",
    help="Vault import throughput, compression, search latency and reindex speed.",
)
app.command(
    "capy.cli.bench_hooks:hooks",
    name="hooks",
    help="Hook latency as a ratio to a bare Python start.",
)
app.command(
    "capy.cli.bench_cli:cli",
    name="cli",
    help="CLI command start-up as a ratio to a bare Python start.",
)
app.command(
    "capy.cli.bench_peer:peer",
    name="peer",
    help="capy beside context-mode (npm) on the same inputs: index, search, execute, memory.",
)
app.command(
    "capy.cli.bench_capsules_import:capsules_import",
    name="capsules-import",
    help="Bulk import of real turns as capsules, capsules/s against a raw insert.",
)
app.command(
    "capy.cli.bench_hostile:hostile",
    name="hostile",
    help="Red-team figures: escapes, raw secrets, bad inputs, SSRF, kill -9 (goal: 0 bad).",
)
app.command(
    "capy.cli.bench_recall:recall",
    name="recall",
    help="Evidence recall of capsule recall on LoCoMo and real sessions, against bm25.",
)
app.command(
    "capy.cli.bench_hybrid:hybrid_latency",
    name="hybrid-latency",
    help="Search p95 with the semantic layer's vector list against lexical-only (100k chunks).",
)
app.command(
    "capy.cli.bench_memory:memory",
    name="memory",
    help="Memory replayed from scenario files: lessons, recall@3, blocking, reinforcement.",
)
app.command(
    "capy.cli.bench_capsules_chaos:capsules_chaos",
    name="capsules-chaos",
    help="Capsules survive kill -9 of pipeline workers: each once, chains verify, all derived.",
)
app.command(
    "capy.cli.bench_ablate:ablate",
    name="ablate",
    help="Turn off one ranking pass at a time: nDCG@10 per dev collection against bm25.",
)
app.command(
    "capy.cli.bench_ablate:ir_build",
    name="ir-build",
    help="Write LoCoMo turns and sessions as TREC collections (dev and held halves).",
)
app.command(
    "capy.cli.bench_proxy:proxy",
    name="proxy",
    help="What capy proxy adds to a chat completion against the direct call, and what it records.",
)

JsonFlag = Annotated[bool, Parameter(name="--json", negative="", help="Print the report as JSON.")]
Flag = Annotated[bool, Parameter(negative="")]
# Where the repository keeps its fixtures, and where the shared test data sits beside it.
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FIXTURES = REPO_ROOT / "fixtures" / "bench" / "quality"
PARAPHRASE_FIXTURES = REPO_ROOT / "fixtures" / "bench" / "paraphrase"
DEFAULT_TREC = REPO_ROOT.parent / "shared" / "testdata" / "ir" / "vaswani"
DEFAULT_SSRF = REPO_ROOT.parent / "shared" / "testdata" / "ssrf"


def _timed(benchmark: str, runs: int, json_output: bool, markdown: Path | None) -> int:
    """Run `capy.bench.<benchmark>.run(runs)` and print it with `<benchmark>_tables`."""
    import importlib

    from capy.bench import report as reports

    report = importlib.import_module(f"capy.bench.{benchmark}").run(runs)
    tables = getattr(reports, f"{benchmark}_tables")(report)
    return _emit(report, tables, json_output, markdown)


@app.command
def rules(*, runs: int = 15, json_output: JsonFlag = False, markdown: Path | None = None) -> int:
    """Time loading the rule packs, cold and warm, as a ratio to a bare YAML parse.

    Parameters
    ----------
    runs
        Repetitions per measurement (the median is reported).
    markdown
        Also write the table as markdown to this file.
    """
    return _timed("rules", runs, json_output, markdown)


@app.command
def startup(*, runs: int = 7, json_output: JsonFlag = False, markdown: Path | None = None) -> int:
    """Time the MCP server from spawn to its tools/list answer, against a bare SDK server.

    Parameters
    ----------
    runs
        Starts per server (the median is reported).
    markdown
        Also write the table as markdown to this file.
    """
    from capy.bench import startup as bench

    report = bench.run(runs)
    return _emit(report, bench.tables(report), json_output, markdown)


@app.command
def executor(*, runs: int = 30, json_output: JsonFlag = False, markdown: Path | None = None) -> int:
    """Time the sandbox's overhead per call against a bare subprocess.run of the same script.

    Parameters
    ----------
    runs
        Calls per measurement (the median is reported).
    markdown
        Also write the table as markdown to this file.
    """
    return _timed("executor", runs, json_output, markdown)


@app.command
def redaction(
    *, runs: int = 15, json_output: JsonFlag = False, markdown: Path | None = None
) -> int:
    """Time redacting 1 MB of typical log text with every secret detector.

    Parameters
    ----------
    runs
        Repetitions (the median is reported).
    markdown
        Also write the table as markdown to this file.
    """
    return _timed("redaction", runs, json_output, markdown)


@app.command
def quality(
    *,
    fixtures: Path | None = None,
    trec: Path | None = None,
    skip_trec: Flag = False,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    check: Flag = False,
    hybrid: Flag = False,
) -> int:
    """Search quality on the needle fixtures, then on a TREC collection against plain FTS5 bm25.

    Parameters
    ----------
    fixtures
        Folder of *.jsonl fixture files (default: the repository's fixtures/bench/quality).
    trec
        TREC collection folder (default: ../shared/testdata/ir/vaswani beside the repository,
        skipped with a note when absent).
    skip_trec
        Run the needle fixtures only.
    markdown
        Also write the tables as markdown to this file.
    check
        Exit with 1 when a goal is missed.
    hybrid
        Also run lexical-only and hybrid (the semantic layer's vector list) side by side on the
        needle fixtures, the paraphrase set and the TREC collection, by dev and held half.
    """
    from capy.bench import report as render
    from capy.bench.fixtures import FixtureError, load_fixtures, load_typo_ids
    from capy.bench.quality import run_quality
    from capy.bench.trec_format import TrecFormatError, load_collection

    directory = fixtures or DEFAULT_FIXTURES
    trec_dir, trec_note = _trec_directory(trec, skip_trec)
    try:
        haystacks = load_fixtures(directory)
        collection = load_collection(trec_dir) if trec_dir else None
    except (FixtureError, TrecFormatError) as error:
        error_line(error.message)
        return 2
    rules = _load_rules()
    with _progress(not json_output) as progress:
        quality_report = run_quality(
            haystacks, rules=rules, typo_ids=load_typo_ids(directory), progress=progress
        )
        trec_report = None
        if collection is not None:
            from capy.bench.trec import run_trec

            trec_report = run_trec(collection, rules=rules, progress=progress)
    tables = render.quality_tables(quality_report)
    if trec_report is not None:
        tables += render.trec_tables(trec_report)
    else:
        tables.append(render.skipped_table("TREC", trec_note))
    report = {"quality": quality_report, "trec": trec_report or {"skipped": trec_note}}
    if hybrid:
        from capy.bench.hybrid import hybrid_tables, run_hybrid

        sets = {"paraphrase": load_fixtures(PARAPHRASE_FIXTURES), "needles": haystacks}
        with _progress(not json_output) as progress:
            report["hybrid"] = run_hybrid(sets, collection, rules, progress)
        tables += hybrid_tables(report["hybrid"])
    code = _emit(report, tables, json_output, markdown)
    goals = quality_report["goals"] + (trec_report["goals"] if trec_report else [])
    goals += [{"met": row["met"]} for row in report.get("hybrid", {}).get("drops", [])]
    return 1 if check and not all(goal["met"] for goal in goals) else code


def _trec_directory(given: Path | None, skip: bool) -> tuple[Path | None, str]:
    if skip:
        return None, "skipped (--skip-trec)"
    if given is not None:
        return given, ""  # asked for by name: a missing folder is an error, said by the loader
    if DEFAULT_TREC.is_dir():
        return DEFAULT_TREC, ""
    return None, f"no TREC collection at {DEFAULT_TREC}; pass --trec DIR to run one"


@app.command
def perf(
    *,
    sizes: str = "1000,10000,100000",
    large: Flag = False,
    megabytes: float = 2.0,
    real_megabytes: float = 5.7,
    rounds: int = 3,
    queries: int = 200,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
    check: Flag = False,
    calls: int = 60,
    calls_megabytes: float = 5.0,
) -> int:
    """Index throughput per content type against bare FTS5 inserts, search latency by size, and
    search, execute and stats through the tool call (MCP over stdio) against their floors.

    Parameters
    ----------
    sizes
        Comma-separated chunk counts at which to measure search latency.
    large
        Also measure search latency at 1,000,000 chunks, on a store built by bulk insert once
        and kept in the user's cache folder for later runs (`just bench`).
    megabytes
        Generated text per content type for the throughput runs.
    real_megabytes
        Real text (shared test data, standard library modules) for the throughput run; 0 skips.
    rounds
        Throughput runs per content type (the best is kept).
    queries
        Queries timed at each size.
    markdown
        Also write the tables as markdown to this file.
    check
        Exit with 1 when a goal is missed.
    calls
        Tool calls timed per tool through MCP (0 skips that table).
    calls_megabytes
        Real text indexed into the store the tool calls run on.
    """
    from capy.bench.perf import run_perf
    from capy.bench.report import perf_tables

    try:
        counts = [int(part) for part in sizes.split(",") if part.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1 or megabytes <= 0 or rounds < 1 or queries < 1:
        error_line(
            "--sizes takes positive chunk counts such as 1000,10000,100000, and --megabytes, "
            "--rounds and --queries must be positive"
        )
        return 2
    if calls < 0 or calls_megabytes <= 0:
        error_line("--calls takes 0 (skip) or more, and --calls-megabytes must be positive")
        return 2
    if real_megabytes < 0:
        error_line("--real-megabytes must be 0 (skip the real-text run) or more")
        return 2
    if large:
        from capy.bench.perf import LARGE_SIZE

        counts.append(LARGE_SIZE)
    rules = _load_rules()
    with _progress(not json_output) as progress:
        report = run_perf(
            sizes=counts,
            megabytes=megabytes,
            real_megabytes=real_megabytes,
            rounds=rounds,
            queries=queries,
            rules=rules,
            progress=progress,
            calls=calls,
            calls_megabytes=calls_megabytes,
        )
    code = _emit(report, perf_tables(report), json_output, markdown)
    return 1 if check and not all(goal["met"] for goal in report["goals"]) else code


def _load_rules():
    from capy.rules import load_rules

    return load_rules()


def _emit(report: dict, tables: list, json_output: bool, markdown: Path | None) -> int:
    from capy.bench.report import markdown as to_markdown
    from capy.bench.report import print_tables

    if json_output:
        print_json(report)
    else:
        print_tables(tables)
    if markdown is not None:
        try:
            markdown.write_text(to_markdown(tables), encoding="utf-8")
        except OSError as error:
            error_line(f"could not write {markdown}: {error.strerror}; pick another path")
            return 2
        print(f"wrote {markdown}", file=sys.stderr)
    return 0


@contextmanager
def _progress(wanted: bool) -> Iterator:
    """A transient progress bar on stderr, only for a person at a terminal."""
    if not (wanted and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    tasks: dict[str, int] = {}
    with Progress(console=Console(stderr=True), transient=True) as bar:

        def update(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)

        yield update
