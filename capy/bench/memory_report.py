"""The tables `capy bench memory` prints: one row per figure, a column per half, and the goal."""

from __future__ import annotations

from typing import Any

from capy.bench.report import Table, fmt

HALVES = ("dev", "held")


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _figures(report: dict[str, Any], half: str) -> dict[str, Any]:
    learned, noise = report["learned"][half], report["noise"][half]
    prompts, blocking = report["prompts"][half], report["blocking"][half]
    tokens = prompts["tokens"]
    return {
        "learned": (learned["learned"], learned["episodes"]),
        "noise": (noise["rejected"], noise["events"]),
        "recall": (prompts["hits"], prompts["labelled"]),
        "false": (prompts["false"], prompts["none"]),
        "tokens": sum(tokens) / len(tokens) if tokens else None,
        "variants": (blocking["denied"], blocking["variants"]),
        "benign": (len(blocking["benign_denied"]), blocking["benign"]),
    }


def _llm_rows(report: dict[str, Any], goals: dict[str, Any]) -> list[tuple[str, ...]]:
    llm = report.get("llm")
    if not llm:
        return []

    def pair(part: int, whole: int) -> str:
        return f"{part}/{whole} ({fmt(_ratio(part, whole), 2)})"

    learned = [pair(llm["learned"][h]["learned"], llm["learned"][h]["episodes"]) for h in HALVES]
    noise = [pair(llm["noise"][h]["rejected"], llm["noise"][h]["events"]) for h in HALVES]
    return [
        ("lessons learned, scripted LLM", *learned, f">= {goals['learned_llm']}"),
        ("noise rejected, scripted LLM", *noise, f">= {goals['noise_rejected']}"),
    ]


def _llm_note(report: dict[str, Any]) -> list[str]:
    llm = report.get("llm")
    if not llm:
        return []
    replies = llm["replies"]
    shapes = ", ".join(f"{name} {count}" for name, count in sorted(replies.items()))
    return [
        f"Scripted LLM on loopback: {shapes}; {llm['fallbacks']} failed calls (causal analysis "
        "or gate) fell back to the no-LLM path. The judge knows the labels and its analyses keep "
        "the draft lesson: the rows measure how capy uses a model's replies, not a model's "
        "judgement.",
    ]


def _real_table(report: dict[str, Any]) -> list[Table]:
    real = report.get("real")
    if not real:
        return []
    if "skipped" in real:
        return [
            Table("memory on real sessions", ("figure", "value"), [("skipped", real["skipped"])])
        ]
    found = len(real["found"])
    rows = [
        ("labelled lessons learned", f"{found}/{real['lessons']}"),
        ("records an unwanted label matches", str(len(real["unwanted"]))),
        ("records no label names", str(len(real["unlabelled"]))),
    ]
    notes = [
        "Real Claude Code sessions backfilled from a vault, no LLM; labels written from the "
        "transcripts before the first run, whose failures were then fixed: a regression set, "
        "not a held-out one."
    ]
    notes += [f"missed: {item}" for item in real["missed"]]
    notes += [f"unwanted: {item}" for item in real["unwanted"]]
    notes += [f"unlabelled: {item}" for item in real["unlabelled"]]
    return [Table("memory on real sessions", ("figure", "value"), rows, notes)]


def memory_tables(report: dict[str, Any]) -> list[Table]:
    goals = report["goals"]
    halves = {half: _figures(report, half) for half in HALVES}

    def pair(name: str, half: str, digits: int = 2) -> str:
        part, whole = halves[half][name]
        return f"{part}/{whole} ({fmt(_ratio(part, whole), digits)})"

    rows = [
        (
            "lessons learned, no LLM",
            *(pair("learned", h) for h in HALVES),
            f">= {goals['learned']}",
        ),
        (
            "noise rejected by the gate",
            *(pair("noise", h) for h in HALVES),
            f">= {goals['noise_rejected']}",
        ),
        (
            "recall@3 on later prompts",
            *(pair("recall", h) for h in HALVES),
            f">= {goals['recall_at_3']}",
        ),
        (
            "injections where none belong",
            *(pair("false", h, 3) for h in HALVES),
            f"<= {goals['false_injection']}",
        ),
        (
            "tokens injected per prompt",
            *(fmt(halves[h]["tokens"], 1) for h in HALVES),
            f"<= {goals['tokens_per_prompt']}",
        ),
        *_llm_rows(report, goals),
        ("blocking variants denied", *(pair("variants", h) for h in HALVES), "all"),
        ("benign commands denied", *(pair("benign", h) for h in HALVES), "0"),
    ]
    tables = [
        Table(
            "memory",
            ("figure", "dev", "held", "goal"),
            rows,
            [
                f"{report['records']} records learned from the episodes and noise, no LLM "
                "configured.",
                *_llm_note(report),
            ],
        )
    ]
    tables.extend(_real_table(report))
    reinforcement = report["reinforcement"]
    if "skipped" not in reinforcement:
        limit = reinforcement["helpful"]["limit"]
        rows = [
            (
                "helpful events to rise above the injection gate again",
                fmt(reinforcement["helpful"]["events"]),
                f"<= {limit}",
            ),
            (
                "harmful events for a rule to fall below the injection gate",
                fmt(reinforcement["harmful"]["events"]),
                f"<= {limit}",
            ),
        ]
        tables.append(Table("memory reinforcement", ("figure", "events", "goal"), rows))
    latency = [(name, fmt(value, 2)) for name, value in report["latency"].items()]
    tables.append(
        Table(
            "memory hook handling, in process (median ms)",
            ("event", "ms"),
            latency,
            [
                "The hook's own work with a digest present; process start-up is measured by "
                "`capy bench hooks`.",
            ],
        )
    )
    tables += _against_bare(
        report.get("processes") or {},
        "memory hook processes with a digest (median ms)",
        ("ms", 1, 1.0, 2),
        "Real hook processes, started as `capy setup` registers them, interleaved with a bare "
        "Python start.",
    )
    tables += _against_bare(
        report.get("instructions") or {},
        "memory hook processes with a digest (callgrind instructions)",
        ("M instructions", 2, 1e6, 3),
        "One run each under valgrind's callgrind, after the timed runs warmed caches.",
    )
    return tables


def _against_bare(
    figures: dict[str, Any], title: str, unit: tuple[str, int, float, int], note: str
) -> list[Table]:
    """One table of hook-process figures beside the bare Python start's, with their ratio to it;
    `unit` is the column's name, its digits, its divisor and the ratio's digits."""
    name, digits, scale, ratio_digits = unit
    bare = figures.get("bare python")
    rows = []
    for event, value in figures.items():
        ratio = value and bare and value / bare
        rows.append((event, fmt(value and value / scale, digits), fmt(ratio, ratio_digits)))
    return [Table(title, ("event", name, "x bare python"), rows, [note])] if rows else []
