"""The prompt part of the memory digest, made when the digest is written (capy.memory.digest):
what UserPromptSubmit ranks (capy.memory.inject.relevant), laid out so that the hook loads
little of it. Kept apart from the ranking so that the hook does not load the code that makes it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A record's stem sets, kept as sets in the prompt part.
_STEM_FIELDS = ("terms", "anchors", "task_terms", "task_only", "programs", "corrected", "pairs")


def prompt_part(digest: dict[str, Any]) -> dict[str, Any]:
    """What relevance reads, computed once when the digest is written rather than in every
    hook, and laid out so that a hook loads little of it: loading the whole of it (thousands of
    small strings and sets) cost a hook more than the ranking. The stems that index records
    are one text of lines `stem id id ...`, searched with `str.find` (capy.memory.inject); the
    entity graph (`word program ...`), the stopwords and the common stems are texts too; each
    record above the prompt gate is marshalled on its own and loaded only when it shares a stem
    with the prompt.
    The part itself is written with marshal (capy.memory.digest)."""
    import marshal
    import math

    budget = digest["prompt"]
    records = [item for item in digest["records"] if item["confidence"] >= budget["min_confidence"]]
    postings: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        for term in record["terms"]:
            postings.setdefault(term, []).append(index)
    total = len(records)
    # Among a few records every stem is "most records'": commonness needs enough of them.
    share = budget.get("common_share", 1.0)
    enough = total >= budget.get("common_min_records", 0)
    common = _held_by_more_than(postings, total * share if enough else total)
    # Stems this frequent ("run": the verb of nearly every command a record was learned from)
    # are not among the stems of what a record says that make it relevant (capy.memory.inject).
    said_share = budget.get("said_common_share", share)
    frequent = _held_by_more_than(postings, total * said_share if enough else total)
    return {
        "format": digest["format"],
        "project": digest["project"],
        "records": [
            marshal.dumps(
                {
                    **{key: record[key] for key in ("id", "type", "text", "confidence")},
                    **{key: frozenset(record.get(key, ())) for key in _STEM_FIELDS},
                }
            )
            for record in records
        ],
        # A stem's idf depends on its record count alone: the few distinct values once.
        "idf_by_count": [
            math.log(1 + (total - count + 0.5) / (count + 0.5)) for count in range(total + 1)
        ],
        "postings": _lines({term: [str(i) for i in ids] for term, ids in postings.items()}),
        "common": _words(common),
        "frequent": _words(frequent),
        "graph": _lines(digest["graph"]),
        "stopwords": _words(digest["stopwords"]),
        "programs": _words(digest.get("programs", ())),
        "synonyms": _lines({key: [value] for key, value in digest.get("synonyms", {}).items()}),
        "chars_per_token": digest["chars_per_token"],
        "prompt": budget,
    }


def _held_by_more_than(postings: dict[str, list[int]], count: float) -> list[str]:
    return [term for term, ids in postings.items() if len(ids) > count]


def _lines(table: dict[str, Any]) -> str:
    """`{key: [value, ...]}` as one text of lines `key value value`, each after a newline (and
    one newline at the end): what `capy.memory.inject._line` searches."""
    return "".join(f"\n{key} {' '.join(values)}" for key, values in sorted(table.items())) + "\n"


def _words(words: Any) -> str:
    return " " + " ".join(sorted(words)) + " "
