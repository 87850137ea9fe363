"""`capy bench ablate` and `capy bench ir-build`: which ranking passes earn their place, on which
collections, and the TREC folders those collections are measured from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter

from capy.cli.bench import DEFAULT_TREC, REPO_ROOT, JsonFlag, _emit, _load_rules, _progress
from capy.cli.output import error_line

DEFAULT_LOCOMO = REPO_ROOT.parent / "shared" / "testdata" / "locomo" / "locomo-dev.json"
Flag = Annotated[bool, Parameter(negative="")]


def ablate(
    *,
    trec: list[Path] | None = None,
    locomo: Path | None = None,
    only: list[str] | None = None,
    skip_vaswani: Flag = False,
    fixtures: Path | None = None,
    skip_needles: Flag = False,
    json_output: JsonFlag = False,
    markdown: Path | None = None,
) -> int:
    """Turn off one ranking pass or boost at a time (each named by its search-pack setting) and
    print nDCG@10 per dev collection against plain FTS5 bm25 and the full pipeline.

    Parameters
    ----------
    trec
        More dev collections in the TREC layout (repeatable). Never pass a held-out one.
    locomo
        LoCoMo JSON file whose dev conversations become two collections, turns and sessions
        (default: the shared test data's locomo-dev.json; skipped with a note when absent).
    only
        Ablate only these settings (repeatable), e.g. --only boosts.proximity.
    skip_vaswani
        Leave out TREC vaswani (../shared/testdata/ir/vaswani).
    fixtures
        Needle fixture folder whose dev half is ablated per content type (default: the
        repository's fixtures/bench/quality).
    skip_needles
        Leave out the needle fixtures.
    markdown
        Also write the tables as markdown to this file.
    """
    from capy.bench.ablate import ABLATIONS, run_ablation, tables

    unknown = sorted(set(only or ()) - {a.setting for a in ABLATIONS})
    if unknown:
        names = ", ".join(a.setting for a in ABLATIONS)
        error_line(f"no ablation named {', '.join(unknown)}; pick from: {names}")
        return 2
    try:
        collections, notes = _dev_collections(trec or [], locomo, skip_vaswani)
    except ValueError as error:
        error_line(str(error))
        return 2
    if not collections:
        error_line("no dev collection found; pass --trec DIR or --locomo FILE")
        return 2
    haystacks = []
    if not skip_needles:
        from capy.bench.fixtures import FixtureError, load_fixtures
        from capy.cli.bench import DEFAULT_FIXTURES

        try:
            haystacks = load_fixtures(fixtures or DEFAULT_FIXTURES)
        except FixtureError as error:
            error_line(f"{error.message} (or --skip-needles)")
            return 2
    with _progress(not json_output) as progress:
        report = run_ablation(
            collections,
            rules=_load_rules(),
            only=only or (),
            haystacks=haystacks,
            progress=progress,
        )
    report["notes"] = notes
    shown = tables(report)
    if notes:
        from capy.bench.report import skipped_table

        shown += [skipped_table("collections left out", note) for note in notes]
    return _emit(report, shown, json_output, markdown)


def _dev_collections(trec: list[Path], locomo: Path | None, skip_vaswani: bool):
    from capy.bench.ir_locomo import collections as locomo_collections
    from capy.bench.ir_locomo import load_locomo
    from capy.bench.trec_format import TrecFormatError, load_collection

    found, notes = [], []
    folders = ([] if skip_vaswani or not DEFAULT_TREC.is_dir() else [DEFAULT_TREC]) + trec
    try:
        found += [load_collection(folder) for folder in folders]
    except TrecFormatError as error:
        raise ValueError(error.message) from error
    source = locomo or DEFAULT_LOCOMO
    if source.is_file():
        built = locomo_collections(load_locomo(source))
        found += [c for c in built if c.name.endswith("-dev")]
    elif locomo is not None:
        raise ValueError(f"no LoCoMo file at {locomo}; pass --locomo FILE (locomo10.json or part)")
    else:
        notes.append(f"no LoCoMo file at {source}: the LoCoMo collections were skipped")
    return found, notes


def ir_build(*, out: Path, locomo: Path | None = None, smart: list[Path] | None = None) -> int:
    """Write LoCoMo's conversations as TREC collections (turns and sessions, dev and held halves,
    split by conversation) for `capy bench quality --trec DIR`, or classic SMART-format
    collections (ADI, CACM, TIME, ...) with --smart.

    Parameters
    ----------
    out
        Folder to write the collections into (one subfolder each). LoCoMo is licensed for
        non-commercial use: keep the output out of the repository.
    locomo
        LoCoMo JSON file (default: the shared test data's locomo-dev.json).
    smart
        A folder holding one SMART collection (repeatable): its documents (`*.all`), queries
        (`*.qry` or `query.text`) and judgements (`*.rel` or `qrels.text`). Written as
        OUT/<folder name, lowercased>; LoCoMo is not converted then.
    """
    from capy.bench.ir_locomo import collections, load_locomo, write_collection

    if smart:
        return _build_smart(smart, out)
    source = locomo or DEFAULT_LOCOMO
    if not source.is_file():
        error_line(f"no LoCoMo file at {source}; pass --locomo FILE (locomo10.json or a part)")
        return 2
    try:
        built = collections(load_locomo(source))
    except (ValueError, KeyError, TypeError) as error:
        error_line(f"{source} is not a LoCoMo file ({error}); pass the upstream locomo10.json")
        return 2
    for collection in built:
        target = write_collection(collection, out)
        print(
            f"{target}: {len(collection.documents)} documents, "
            f"{len(collection.judged_topics)} judged topics"
        )
    return 0


def _build_smart(folders: list[Path], out: Path) -> int:
    from capy.bench.ir_locomo import write_collection
    from capy.bench.ir_smart import load_smart

    for folder in folders:
        try:
            collection = load_smart(folder)
        except (OSError, ValueError) as error:
            error_line(f"{folder} is not a SMART collection ({error}); pass a folder of one")
            return 2
        target = write_collection(collection, out)
        print(
            f"{target}: {len(collection.documents)} documents, "
            f"{len(collection.judged_topics)} judged topics"
        )
    return 0
