"""How long capy takes to have its policy in hand, against a bare YAML parse of the same files.

Every hook is a fresh process, so the cold path (parse, validate, lint, merge) is paid on each
tool call unless something is cached; the warm path is what the long-running server pays.
"""

from __future__ import annotations

from ruamel.yaml import YAML

from capy.bench.timing import Timing, measure
from capy.rules import ruleset as ruleset_module
from capy.rules.backtracking import risky_shape
from capy.rules.resources import shipped_pack_files


def _bare_parse() -> None:
    yaml = YAML(typ="safe")
    for entry in shipped_pack_files():
        yaml.load(entry.read_text(encoding="utf-8"))


def _cold_build() -> None:
    _forget_shipped()
    ruleset_module.build_ruleset(include_shipped=True, shipped_cache=False)


def _overlay_edited_build() -> None:
    """A fresh process after an overlay edit: the shipped packs come from their disk cache."""
    _forget_shipped()
    ruleset_module.build_ruleset(include_shipped=True)


def _cold_build_with_examples() -> None:
    _forget_shipped()
    ruleset_module.build_ruleset(include_shipped=True, examples=True, shipped_cache=False)


def _forget_shipped() -> None:
    """A fresh process: nothing parsed or checked in memory yet."""
    ruleset_module._shipped_files_cached.cache_clear()
    ruleset_module._SCHEMA_MEMO.clear()
    risky_shape.cache_clear()


def _warm_load() -> None:
    ruleset_module.load_rules()


def run(runs: int = 15) -> dict:
    timings: list[Timing] = [
        measure("bare YAML parse of the shipped packs (ruamel safe loader)", _bare_parse, runs),
        measure("cold build: strict parse + schema + lint + merge", _cold_build, runs),
        measure(
            "shipped packs read back from disk (a process after an overlay edit)",
            _overlay_edited_build,
            runs,
        ),
        measure("cold build with every example run", _cold_build_with_examples, max(3, runs // 3)),
        measure("warm load_rules() (process cache)", _warm_load, runs * 10),
    ]
    baseline = timings[0].median_ms
    return {
        "benchmark": "rules",
        "baseline": timings[0].name,
        "results": [
            {
                "name": timing.name,
                "median_ms": round(timing.median_ms, 3),
                "p95_ms": round(timing.p95_ms, 3),
                "runs": timing.runs,
                "ratio_to_baseline": round(timing.median_ms / baseline, 3) if baseline else None,
            }
            for timing in timings
        ],
    }
