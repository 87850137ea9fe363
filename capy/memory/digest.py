"""The memory digest: what hooks need of memory, written by learning, read in a few ms.

Hooks are a fresh process per call and must stay fast, so they do not open the capsule
database: learning writes the records worth injecting or enforcing (never deprecated or
superseded ones), the budgets and the blocking classes to a 0600 JSON file beside the capture
spool, already redacted like the capsules they came from. A missing or unreadable digest means
no memory for the hook, never an error for the agent.
"""

from __future__ import annotations

import os
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# 2: blocking classes carry their command regexes and the wrappers are the view's plain copy,
# so a hook blocks without `re` or the views.
DIGEST_FORMAT = 2


# PreToolUse reads only what blocking needs, from its own small file: every Bash call pays for
# reading it, and the full digest grows with every record learned.
BLOCKING = "blocking"


# UserPromptSubmit reads its own file too (capy.memory.prompt_index makes it), marshalled
# with its stem sets as sets: parsing the same data as JSON, then splitting it into sets, cost
# the hook about 4M instructions of the 1.6M it may spend on memory. Like the hooks' compiled
# patterns (capy.packregex), it is read only when this user owns it and nobody else may write it.
PROMPT = "prompt"


def digest_path(data_dir: str, project: str, part: str = "") -> str:
    name = f"{zlib.crc32(project.encode()):08x}" + (f".{part}" if part else "")
    suffix = "marshal" if part == PROMPT else "json"
    return os.path.join(data_dir, "memory", f"{name}.{suffix}")


def read_digest(data_dir: str, project: str, part: str = "") -> dict[str, Any] | None:
    """The project's digest (`part` BLOCKING: only what PreToolUse needs; PROMPT: what
    UserPromptSubmit ranks), or None."""
    path = digest_path(data_dir, project, part)
    if part == PROMPT:
        from capy.watched import read_own_marshal_dict

        data = read_own_marshal_dict(path)
    else:
        data = _read_json(path)
    if not isinstance(data, dict) or data.get("format") != DIGEST_FORMAT:
        return None
    return data if data.get("project") == project else None


def _read_json(path: str) -> Any:
    from capy.leanjson import loads

    try:
        with open(path, encoding="utf-8") as handle:
            return loads(handle.read())
    except (OSError, ValueError):
        return None


def write_digest(data_dir: str, project: str, digest: dict[str, Any]) -> str:
    """Write the digest and its blocking part (first, so a hook never blocks by a newer
    full digest's absent record); returns the full digest's path."""
    _write(digest_path(data_dir, project, BLOCKING), blocking_part(digest))
    from capy.memory.prompt_index import prompt_part

    _write(digest_path(data_dir, project, PROMPT), prompt_part(digest), marshalled=True)
    path = digest_path(data_dir, project)
    _write(path, digest)
    return path


def _exact(value: Any) -> Any:
    """`value` in the exact built-in types marshal writes: a pack's numbers and lists may be
    subclasses (a YAML loader's), which marshal refuses."""
    for plain in (bool, int, float, str):
        if isinstance(value, plain):
            return plain(value)
    if isinstance(value, dict):
        return {_exact(key): _exact(item) for key, item in value.items()}
    if isinstance(value, frozenset | set):
        return frozenset(_exact(item) for item in value)
    if isinstance(value, list | tuple):
        return [_exact(item) for item in value]
    return value


def blocking_part(digest: dict[str, Any]) -> dict[str, Any]:
    """What PreToolUse reads: the records that block, the blocking settings and the wrappers."""
    return {
        "format": digest["format"],
        "project": digest["project"],
        "records": [
            {key: record[key] for key in ("id", "type", "text", "confidence", "block")}
            for record in digest["records"]
            if record.get("block")
        ],
        "blocking": digest["blocking"],
        "wrappers": digest["wrappers"],
    }


def _write(path: str, data: dict[str, Any], *, marshalled: bool = False) -> None:
    import json
    import marshal

    from capy.atomicfile import write_atomically

    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if marshalled:
        content = marshal.dumps(_exact(data))
    else:
        content = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    write_atomically(path, content)


def build_digest(project: str, records: list[dict[str, Any]], rules: Any) -> dict[str, Any]:
    """The digest for one project from its settled records and the rule set in force."""
    import re

    from capy.memory.blocking import plain_wrappers
    from capy.memory.words import folded, pairs_of, stem_sequence, stems, synonym_table
    from capy.rules.commands import command_pattern_source

    pack = rules.view("memory")
    classes = {block.id: block for block in pack.blocking.live_classes}
    # The search core's stopwords and query filler: a prompt is a request, and "use", "need" and
    # "please" say as little about which record it wants as about which document.
    stopwords = sorted(stems(" ".join(rules.view("search").stopwords.all)))
    codes = re.compile(pack.injection.prompt.code_tokens or r"(?!)")
    known = _known_programs(records)
    synonyms = synonym_table(group.terms for group in pack.live_synonyms)

    def said(text: str) -> list[str]:
        """A record's stems as a prompt's are matched: each synonym as its group's first."""
        return folded(stem_sequence(text), synonyms.get)

    kept = []
    for record in records:
        if record["status"] in ("deprecated", "superseded"):
            continue
        block = classes.get(record.get("block_class") or "")
        kept.append(
            {
                "id": record["id"],
                "type": record["type"],
                "text": record["text"],
                "confidence": record["confidence"],
                "terms": sorted(set(said(" ".join([record["text"], *_about(record)])))),
                "anchors": sorted(
                    set(
                        said(
                            " ".join(
                                [
                                    *record.get("words", ()),
                                    *_about(record),
                                    *codes.findall(record["text"]),
                                ]
                            )
                        )
                    )
                ),
                "pairs": sorted(pairs_of(said(record["text"]), set(stopwords))),
                "task_terms": sorted(set(said(record.get("task") or "")) - set(stopwords)),
                "task_only": sorted(_task_only(record, said)),
                "programs": sorted(_programs(record, known)),
                "corrected": sorted(_corrected(record)),
                "block": (
                    {
                        "id": block.id,
                        "command": list(block.command),
                        "regexes": [command_pattern_source(item) for item in block.command],
                        "word": block.word,
                    }
                    if block is not None and record.get("blocking", True)
                    else None
                ),
            }
        )
    data = rules.pack("memory").data
    graph = _graph(records, known, set(stopwords), pack.injection.prompt.graph_links)
    return {
        "format": DIGEST_FORMAT,
        "project": project,
        "records": kept,
        "graph": graph,
        "stopwords": stopwords,
        # The one-word programs learned rules ran (cargo, go, git), stemmed: a task asked for
        # again must share more of the task than the program it was done with.
        "programs": sorted(stems(" ".join(name for name in known if name.isalnum()))),
        "synonyms": synonyms,
        "chars_per_token": data["injection"]["chars_per_token"],
        "session_start": dict(data["injection"]["session_start"]),
        "prompt": dict(data["injection"]["prompt"]),
        "blocking": {
            "min_confidence": pack.blocking.min_confidence,
            "override": " ".join(pack.blocking.override.split()),
        },
        "wrappers": plain_wrappers(rules.view("security").command_wrappers),
    }


def _known_programs(records: list[dict[str, Any]]) -> set[str]:
    """The programs learned rules ran: a word of a preference's text is a program when a rule
    ran it."""
    return {
        entity.lower()
        for record in records
        if record["type"] == "rule"
        for entity in record.get("entities", ())
        if entity.replace("-", "").isalnum()
    }


def _graph(
    records: list[dict[str, Any]], known: set[str], stopwords: set[str], links: int
) -> dict[str, list[str]]:
    """Words to the programs they go with in what was learned: the task a record was learned in
    ("lint the rust workspace") and a user's own sentence link their words to the record's
    programs (cargo). A word linked to more than `links` programs says nothing specific."""
    from capy.memory.words import stems

    edges: dict[str, set[str]] = {}
    for record in records:
        if record["status"] in ("deprecated", "superseded"):
            continue
        programs = _programs(record, known)
        if not programs:
            continue
        said = [record.get("task") or ""]
        if record["type"] != "rule":
            said.append(record["text"])
        for word in stems(" ".join(said)) - stopwords - programs:
            edges.setdefault(word, set()).update(programs)
    return {word: sorted(found) for word, found in edges.items() if len(found) <= links}


def _programs(record: dict[str, Any], known: set[str]) -> set[str]:
    from capy.memory.words import stems

    if record["type"] == "rule":
        names = [entity for entity in record.get("entities", ()) if entity.lower() in known]
    else:
        names = [entity.split()[0] for entity in record.get("entities", ()) if entity.split()]
        names += (record.get("context") or "").split()[:1]
        names += [word for word in record["text"].lower().split() if word.strip("`") in known]
    return stems(" ".join(names).replace("`", " "))


def _corrected(record: dict[str, Any]) -> set[str]:
    """The program of the command the user corrected when the record was said ("no, use pnpm
    here" after `npm install zod`: npm)."""
    from capy.memory.learning import command_program
    from capy.memory.words import stems

    return stems(" ".join(command_program(record.get("context") or "")))


def _task_only(record: dict[str, Any], said: Callable[[str], list[str]]) -> set[str]:
    """The stems only the record's task holds, not its text, commands or entities."""
    own = [record["text"], *record.get("words", ()), *record.get("entities", ())]
    task = said(record.get("task") or "")
    return set(task).difference(said(" ".join([*own, record.get("context") or ""])))


def _about(record: dict[str, Any]) -> list[str]:
    """What a record is about beyond its text: its entities, the command it corrected and the
    task it was learned in."""
    return [*record.get("entities", ()), record.get("context") or "", record.get("task") or ""]
