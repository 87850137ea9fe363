"""Which ranking pass earns its place: turn off one at a time and measure nDCG@10 against bm25.

On each dev collection (TREC vaswani, LoCoMo turns and sessions of the dev conversations, and any
TREC folder given, such as a classic collection `capy bench ir-build --smart` converts), the
documents are indexed once, the plain FTS5 bm25 floor of `capy.bench.trec`
ranks every topic, and capy ranks every topic once with the search pack as shipped and once per
ablation: the same pack with one setting changed to turn its pass or boost off. Each ablation is
named by that setting. A pass whose ablation scores higher than the full pipeline costs on that
collection; one that scores lower earns its place there.

The same ablations run on the dev half of the needle fixtures (`capy bench quality`), with R@1
and nDCG@10 per content type: a boost that costs on one content type and earns on others gets a
profile for that type in the search pack (`profiles`), so it is judged type by type.

Only dev halves are measured here: held halves are for reporting (`capy bench quality --trec`),
never for choosing what to turn off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capy.bench import metrics
from capy.bench.fixtures import Haystack
from capy.bench.hybrid import half_of
from capy.bench.trec import NDCG_DEPTH, build_floor, floor_ranking, indexed_collection, rankings
from capy.bench.trec_format import TrecCollection
from capy.rules.views.base import with_fields

FULL = "full pipeline"
FLOOR = "fts5 bm25"


@dataclass(frozen=True)
class Ablation:
    """One setting of the search pack and the value that turns its pass off."""

    setting: str  # dotted path in the search pack, e.g. "boosts.proximity"
    off: Any


# What capy does beyond bare bm25, one setting each. For a cap, "off" is a value no query reaches.
ABLATIONS: tuple[Ablation, ...] = (
    Ablation("query.max_terms", 64),
    Ablation("query.trigram_when_porter_below", 0),
    Ablation("stopwords.english", ()),
    Ablation("synonyms.groups", ()),
    Ablation("morphology.compounds", ()),
    Ablation("morphology.negation.prefixes", ()),
    Ablation("morphology.split_identifiers", False),
    Ablation("bm25.title_weight", 1.0),
    Ablation("fusion.rerank_per_result", 1000),
    Ablation("boosts.title.prose", 0.0),
    Ablation("boosts.title.code", 0.0),
    Ablation("boosts.proximity", 0.0),
    Ablation("boosts.phrase.weight", 0.0),
    Ablation("boosts.entity", 0.0),
    Ablation("boosts.definition.weight", 0.0),
    Ablation("fuzzy.enabled", False),
    Ablation("diversity.max_per_source", 1000),
    # Every chunk ranked by `boosts`, whatever its content type. A `boosts.*` ablation changes
    # the weights that content without a profile (or a profile not setting that weight) uses.
    Ablation("profiles", ()),
)

Progress = Callable[[str, int, int], None]


def ablated(pack: Any, ablation: Ablation) -> Any:
    """The search pack with one setting changed (a typed view, copied section by section)."""
    return _set(pack, ablation.setting.split("."), ablation.off)


def _set(section: Any, path: list[str], value: Any) -> Any:
    head, rest = path[0], path[1:]
    new = _set(getattr(section, head), rest, value) if rest else value
    return with_fields(section, **{head: new})


def known_settings(pack: Any) -> list[str]:
    """The ablations this pack has a setting for (an older pack may lack a newer one)."""
    names = []
    for ablation in ABLATIONS:
        section = pack
        try:
            for part in ablation.setting.split("."):
                section = getattr(section, part)
        except AttributeError:
            continue
        names.append(ablation.setting)
    return names


def run_ablation(
    collections: Sequence[TrecCollection],
    *,
    rules: Any = None,
    only: Sequence[str] = (),
    haystacks: Sequence[Haystack] = (),
    progress: Progress | None = None,
) -> dict:
    from capy.rules import load_rules

    ruleset = rules or load_rules()
    pack = ruleset.view("search")
    chosen = [
        a
        for a in ABLATIONS
        if a.setting in known_settings(pack) and (not only or a.setting in only)
    ]
    rows = []
    for number, collection in enumerate(collections, start=1):
        if progress:
            progress("ablation collections", number - 1, len(collections))
        rows.append(_collection_row(collection, ruleset, pack, chosen))
    if progress:
        progress("ablation collections", len(collections), len(collections))
    return {
        "benchmark": "ablate",
        "metric": f"ndcg@{NDCG_DEPTH}",
        "ablations": [a.setting for a in chosen],
        "collections": rows,
        "needles": _needle_rows(haystacks, ruleset, pack, chosen) if haystacks else None,
    }


class _WithSearch:
    """A rule set whose search pack is `pack`; every other pack is the wrapped set's."""

    def __init__(self, rules: Any, pack: Any) -> None:
        self._rules, self._pack = rules, pack

    def view(self, name: str) -> Any:
        return self._pack if name == "search" else self._rules.view(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)


def _needle_rows(
    haystacks: Sequence[Haystack], ruleset: Any, pack: Any, chosen: Sequence[Ablation]
) -> dict:
    """R@1 and nDCG@10 per content type on the dev half of the needle fixtures, per ablation.
    The search pack shapes no index, so one store serves every run."""
    from dataclasses import replace

    from capy.bench.quality import OVERALL, group_figures, run_cases_under

    dev = [
        replace(h, cases=tuple(c for c in h.cases if half_of(c.case_id) == "dev"))
        for h in haystacks
    ]
    dev = [h for h in dev if h.cases]
    variants = {FULL: _WithSearch(ruleset, pack)} | {
        a.setting: _WithSearch(ruleset, ablated(pack, a)) for a in chosen
    }
    outcomes = run_cases_under(dev, variants, index_rules=ruleset)
    types = [*dict.fromkeys(h.content_type for h in dev), OVERALL]
    runs = []
    for name, cases in outcomes.items():
        groups = {t: [o for o in cases if t in (OVERALL, o.content_type)] for t in types}
        figures = {t: group_figures(t, members) for t, members in groups.items()}
        runs.append(
            {
                "setting": name,
                **{
                    t: {"r@1": f["r@1"], "ndcg@10": f["ndcg@10"], "positives": f["positives"]}
                    for t, f in figures.items()
                },
            }
        )
    return {"half": "dev", "content_types": types, "runs": runs}


def _collection_row(
    collection: TrecCollection, ruleset: Any, pack: Any, chosen: Sequence[Ablation]
) -> dict:
    qrels = collection.qrels
    conn = build_floor(collection.documents)
    floor = {t.id: floor_ranking(conn, t.text, NDCG_DEPTH) for t in collection.judged_topics}
    conn.close()
    floor_ndcg = _ndcg(floor, qrels)
    scores: dict[str, float] = {}
    with indexed_collection(collection, ruleset) as (store, _seconds):
        scores[FULL] = _ndcg(rankings(store, collection, ruleset, pack, NDCG_DEPTH), qrels)
        for ablation in chosen:
            runs = rankings(store, collection, ruleset, ablated(pack, ablation), NDCG_DEPTH)
            scores[ablation.setting] = _ndcg(runs, qrels)
    return {
        "collection": collection.name,
        "documents": len(collection.documents),
        "topics": len(collection.judged_topics),
        "floor": floor_ndcg,
        "full": scores[FULL],
        "runs": [
            {
                "setting": name,
                "ndcg@10": value,
                "vs_floor": _ratio(value, floor_ndcg),
                "vs_full": value - scores[FULL],
            }
            for name, value in scores.items()
        ],
    }


def _ndcg(runs: dict[str, list[str]], qrels: dict[str, frozenset[str]]) -> float:
    return metrics.mean(metrics.ndcg_at(ranked, qrels[topic]) for topic, ranked in runs.items())


def _ratio(value: float, baseline: float) -> float | None:
    return value / baseline if baseline else None


def tables(report: dict) -> list:
    from capy.bench.report import Table

    out = []
    for row in report["collections"]:
        table = Table(
            title=f"Ablation: {row['collection']} ({row['documents']} documents, "
            f"{row['topics']} topics), nDCG@10",
            columns=("pass turned off (pack setting)", "nDCG@10", "x bm25", "vs full"),
        )
        table.rows.append((FLOOR, f"{row['floor']:.4f}", "1.000x", ""))
        for run in row["runs"]:
            ratio = run["vs_floor"]
            table.rows.append(
                (
                    run["setting"],
                    f"{run['ndcg@10']:.4f}",
                    f"{ratio:.3f}x" if ratio is not None else "-",
                    "" if run["setting"] == FULL else f"{run['vs_full']:+.4f}",
                )
            )
        table.notes.append(
            "vs full > 0: the pipeline scores higher with that pass off (it costs here)"
        )
        out.append(table)
    if report.get("needles"):
        out.append(_needle_table(report["needles"]))
    return out


def _needle_table(needles: dict) -> Any:
    from capy.bench.report import Table

    types = needles["content_types"]
    full = needles["runs"][0]
    counts = ", ".join(f"{t} {full[t]['positives']}" for t in types)
    table = Table(
        title=f"Ablation: needle fixtures, dev half ({counts} cases), R@1 / nDCG@10 by type",
        columns=("pass turned off (pack setting)", *types),
    )
    for run in needles["runs"]:
        cells = []
        for t in types:
            r1, ndcg = run[t]["r@1"], run[t]["ndcg@10"]
            if r1 is None:
                cells.append("-")
            elif run is full:
                cells.append(f"{r1:.3f} / {ndcg:.3f}")
            else:
                cells.append(f"{r1 - full[t]['r@1']:+.3f} / {ndcg - full[t]['ndcg@10']:+.3f}")
        table.rows.append((run["setting"], *cells))
    table.notes.append(
        "rows after the full pipeline show the change with that pass off: > 0 means it costs on "
        "that content type"
    )
    return table
