"""Which ranking pass earns its place: turn off one at a time and measure nDCG@10 against bm25.

On each dev collection (TREC vaswani, LoCoMo turns and sessions of the dev conversations, and any
TREC folder given), the documents are indexed once, the plain FTS5 bm25 floor of `capy.bench.trec`
ranks every topic, and capy ranks every topic once with the search pack as shipped and once per
ablation: the same pack with one setting changed to turn its pass or boost off. Each ablation is
named by that setting. A pass whose ablation scores higher than the full pipeline costs on that
collection; one that scores lower earns its place there.

Only dev halves are measured here: held halves are for reporting (`capy bench quality --trec`),
never for choosing what to turn off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capy.bench import metrics
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
    }


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
    return out
