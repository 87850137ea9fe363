"""`capy bench memory` on real sessions: the transcripts fixtures/memory/claude-transcripts.yaml
points at, imported into a vault in a scratch home, backfilled as capsules (as
`capy memory learn --from-vault` does) and learned from with no LLM; then the labels are checked.
The labels were written before the first run; its failures were fixed at their cause, so the
figure is a regression check on real data, not a held-out one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

LABELS = "claude-transcripts.yaml"


def real_sessions(fixtures: Path, root: Path, repo: Path) -> dict[str, Any]:
    """The labelled lessons found and missed, the unwanted records kept, and the records no
    label names; `skipped` (and why) when the labels or the transcripts are absent."""
    from ruamel.yaml import YAML

    from capy.bench.memory import scratch_home

    path = fixtures / LABELS
    if not path.is_file():
        return {"skipped": f"no {LABELS} in {fixtures}"}
    labels = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    source = (repo / labels["source"]).resolve()
    if not source.is_dir():
        return {"skipped": f"the transcripts are not here ({labels['source']})"}
    with scratch_home(root) as project:
        records = _learn_from(source, project)
    return _judge(labels, records)


def _learn_from(source: Path, project: Path) -> list[dict[str, Any]]:
    from capy.capsules import open_capsules
    from capy.capsules.backfill import backfill_from_vault
    from capy.memory import learn, records_of
    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    with open_vault(project / "vault.db") as vault:
        import_sessions(vault, ImportOptions(source=source))
        with open_capsules(project_dir=project, notify=lambda _line: None) as store:
            backfill_from_vault(store, vault)
            learn(store)
            return records_of(store)


def _judge(labels: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    found, missed, wanted_ids = [], [], set()
    for lesson in labels.get("lessons", []):
        matches = [
            record
            for record in records
            if record["type"] == lesson["type"]
            and all(word.lower() in record["text"].lower() for word in lesson["words"])
        ]
        (found if matches else missed).append(lesson["id"])
        wanted_ids.update(record["id"] for record in matches)
    unwanted = []
    for item in labels.get("unwanted", []):
        pattern = re.compile(item["pattern"], re.IGNORECASE)
        unwanted.extend(
            f"{item['id']}: {record['text'][:100]}"
            for record in records
            if pattern.search(record["text"])
        )
    unlabelled = [
        f"{record['type']}: {record['text'][:100]}"
        for record in records
        if record["id"] not in wanted_ids
    ]
    return {
        "lessons": len(labels.get("lessons", [])),
        "found": found,
        "missed": missed,
        "unwanted": unwanted,
        "unlabelled": unlabelled,
        "records": len(records),
    }
