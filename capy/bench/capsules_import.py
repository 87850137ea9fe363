"""`capy bench capsules-import`: bulk-import throughput of the capsule log, against a floor.

The capsules are real conversation turns (LoCoMo, from the shared test data), written as the
JSONL file `capy capsules import` reads; the run imports that file into a fresh SQLCipher
capsule log through the whole path (parse, check, redact, hash, chain, outbox jobs, batched
transactions). The floor, in the same run, is a raw one-transaction `executemany` of the very
same rows (ids and chain hashes computed beforehand) into a fresh log of the same schema and
cipher: what the disk and SQLCipher cost with nothing of capy's around them.

The conversations are split before any tuning into a dev half (conv-26, conv-30, conv-41) and a
held-back half (conv-42, conv-43); each half is imported on its own and both figures are shown.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

DEV = ("conv-26", "conv-30", "conv-41")
HELD_BACK = ("conv-42", "conv-43")
GOAL_PER_SECOND = 1000
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Turn:
    conversation: str
    session: str
    speaker: str
    text: str
    created_at: str


def load_turns(path: Path) -> list[Turn]:
    """Every turn of the LoCoMo file, in order, with its session's date."""
    turns = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        first_speaker = sample["conversation"]["speaker_a"]
        for session, turn, created_at in dated_turns(sample):
            turns.append(
                Turn(
                    conversation=sample["sample_id"],
                    session=session,
                    speaker="a" if turn["speaker"] == first_speaker else "b",
                    text=turn["text"],
                    created_at=created_at,
                )
            )
    return turns


def dated_turns(sample: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(session key, turn, created_at) of one LoCoMo conversation: each session's date and
    time, its turns 30 s apart."""
    conversation = sample["conversation"]
    for key, value in conversation.items():
        if not key.startswith("session_") or not isinstance(value, list):
            continue
        started = datetime.strptime(conversation[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
        for offset, turn in enumerate(value):
            moment = started + timedelta(seconds=offset * 30)
            yield key, turn, moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def jsonl_lines(turns: list[Turn], count: int) -> Iterator[str]:
    """`count` capsule lines: the turns, repeated as further rounds when more are asked for
    (each round its own session ids, so every capsule is distinct)."""
    for index in range(count):
        turn = turns[index % len(turns)]
        round_ = index // len(turns)
        yield json.dumps(
            {
                "kind": "prompt" if turn.speaker == "a" else "response",
                "content": turn.text,
                "created_at": turn.created_at,
                "scope": f"locomo/{turn.conversation}",
                "metadata": {"session_id": f"{turn.conversation}/{turn.session}/r{round_}"},
            }
        )


def run(locomo: Path, *, capsules: int, progress: Progress | None = None) -> dict[str, Any]:
    from capy.rules import load_rules

    rules = load_rules()
    turns = load_turns(locomo)
    halves = {
        "dev": [turn for turn in turns if turn.conversation in DEV],
        "held-back": [turn for turn in turns if turn.conversation in HELD_BACK],
    }
    results = []
    with tempfile.TemporaryDirectory(prefix="capy-bench-capsules-") as folder:
        for number, (name, half) in enumerate(halves.items(), 1):
            results.append(_measure(name, half, capsules, rules, Path(folder) / name))
            if progress is not None:
                progress("capsules-import", number, len(halves))
    return {
        "benchmark": "capsules-import",
        "source": locomo.name,
        "capsules": capsules,
        "goal_per_second": GOAL_PER_SECOND,
        "halves": results,
        "goals": [
            {"half": row["half"], "met": row["capy_per_second"] >= GOAL_PER_SECOND}
            for row in results
        ],
    }


def _measure(name: str, turns: list[Turn], count: int, rules, folder: Path) -> dict[str, Any]:
    from capy.capsules.importing import ImportReport, prepare_all, read_jsonl, write_prepared
    from capy.capsules.sqlite.rows import stored_rows

    folder.mkdir()
    source = folder / "capsules.jsonl"
    source.write_text("".join(line + "\n" for line in jsonl_lines(turns, count)), "utf-8")
    with _fresh_log(folder / "capy.db", rules) as store:
        cpu_started = time.process_time()
        started = time.perf_counter()
        drafts = list(read_jsonl(source))
        parsed = time.perf_counter()
        prepared = prepare_all(store, drafts)
        ready = time.perf_counter()
        report = ImportReport(read=len(prepared))
        write_prepared(store, prepared, report)
        done = time.perf_counter()
        cpu = time.process_time() - cpu_started
        if report.new != count or not all(chain.ok for chain in store.verify()):
            raise AssertionError(f"the {name} import did not store {count} verifying capsules")
        rows = stored_rows(store.conn)
    floor_seconds, floor_cpu = _floor(folder / "floor.db", rows, rules)
    total = done - started
    return {
        "half": name,
        "turns": len(turns),
        "capy_seconds": round(total, 3),
        "capy_per_second": round(count / total),
        "floor_per_second": round(count / floor_seconds),
        "x_floor": round(floor_seconds / total, 3),
        # On a shared machine wall time mostly measures the neighbours; CPU time does not.
        "capy_per_cpu_second": round(count / cpu),
        "floor_per_cpu_second": round(count / floor_cpu),
        "parse_share": round((parsed - started) / total, 3),
        "prepare_share": round((ready - parsed) / total, 3),
        "write_share": round((done - ready) / total, 3),
    }


def _fresh_log(path: Path, rules, secret: bytes | None = None):
    """A capsule log with a throw-away key (or `secret`, to open it again): a benchmark never
    touches the user's key files."""
    from capy.capsules import CapsuleStore
    from capy.capsules.location import CapsulesLocation
    from capy.capsules.sqlite.schema import prepare_capsules
    from capy.store.database import open_database
    from capy.store.keys import DatabaseKey, KeySource

    source = KeySource("capsules", "benchmark key")
    key = DatabaseKey(secret or secrets.token_bytes(32), source)
    conn = open_database(path, key, migrator=prepare_capsules)
    location = CapsulesLocation(path=path, key_source=source, project_root=path.parent)
    return CapsuleStore(conn=conn, location=location, key=key, _rules=rules)


def _floor(path: Path, rows: list[tuple], rules) -> tuple[float, float]:
    """Seconds (wall, CPU) to insert `rows` raw, in one transaction, into a fresh log of the
    same kind."""
    from capy.capsules.sqlite.rows import insert_rows

    with _fresh_log(path, rules) as store:
        cpu_started = time.process_time()
        started = time.perf_counter()
        insert_rows(store.conn, rows)
        return time.perf_counter() - started, max(time.process_time() - cpu_started, 1e-6)


def tables(report: dict[str, Any]) -> list:
    from capy.bench.report import Table, fmt

    table = Table(
        f"bulk import of {report['capsules']:,} capsules per half ({report['source']} turns; "
        "floor = the same rows in one raw INSERT transaction, fresh SQLCipher log)",
        (
            "half",
            "turns",
            "capy /s",
            "floor /s",
            "x floor",
            "capy /cpu-s",
            "floor /cpu-s",
            "parse",
            "prepare",
            "write",
        ),
    )
    for row in report["halves"]:
        table.rows.append(
            (
                row["half"],
                str(row["turns"]),
                f"{row['capy_per_second']:,}",
                f"{row['floor_per_second']:,}",
                fmt(row["x_floor"], 3),
                f"{row['capy_per_cpu_second']:,}",
                f"{row['floor_per_cpu_second']:,}",
                f"{row['parse_share']:.0%}",
                f"{row['prepare_share']:.0%}",
                f"{row['write_share']:.0%}",
            )
        )
    table.notes.append(f"goal: at least {report['goal_per_second']:,} capsules/s in bulk import")
    table.notes.append(
        "capsules per second of wall time, and per second of this process's CPU time (wall "
        "time on a busy machine counts the other processes too); parse, prepare (check, "
        "redact, hash) and write (chain, outbox jobs, commit) are shares of capy's wall time"
    )
    return [table]
