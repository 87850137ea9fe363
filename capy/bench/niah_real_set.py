"""The real-output needle set: real tool outputs, questions written before any capy reply.

`fixtures/niah-real/set.yaml` lists each output (a file under `outputs/`, the tool and command
that printed it, where it came from) with its intents. A positive intent names needles that
occur verbatim in the output and answer it; a negative intent names strings whose absence
from the output is what makes it unanswerable. Every output carries a `half` (dev or held),
chosen by `assign_halves` from a seeded hash and balanced by tool kind, so the split is fixed
before anything is tuned and a test can recompute it. Outputs added after the split was fixed
(`dev_additions`, real outputs of tool kinds the dev half lacked) join the dev half only and
stay out of the seeded split, so adding them never moves an output between halves. Later
batches of real outputs (`batches`, each with its own seed) are split by the same rule over
that batch alone, fixed before any capy reply to them was read: the set grows on both halves
and no earlier output changes half.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from capy.bench.niah import NiahFixtureError

SET_FILE = "set.yaml"
OUTPUTS_FOLDER = "outputs"
HALVES = ("dev", "held")
INTENT_KINDS = ("positive", "negative")
SHAPES = ("lookup", "deep", "multi", "comparison")


# One error type for both needle sets: a set file that does not follow its format, with a
# message that names the file and the entry.
RealSetError = NiahFixtureError


@dataclass(frozen=True)
class RealIntent:
    intent_id: str
    kind: str
    shape: str | None
    intent: str
    needles: tuple[str, ...]


@dataclass(frozen=True)
class RealOutput:
    file: str
    tool: str
    command: str
    origin: str
    license: str
    half: str
    path: Path
    intents: tuple[RealIntent, ...]
    added: bool = False  # a dev addition, outside the seeded split
    batch: str = ""  # the seed of the later batch it came in with; "" for the first split


@dataclass(frozen=True)
class RealSet:
    seed: str
    outputs: tuple[RealOutput, ...]


def load_real_set(directory: Path) -> RealSet:
    """The set in `directory/set.yaml`, each output file checked to exist."""
    from ruamel.yaml import YAML, YAMLError

    index = directory / SET_FILE
    try:
        data = YAML(typ="safe").load(index.read_text(encoding="utf-8"))
    except OSError as error:
        raise RealSetError(
            f"cannot read {index}: {error.strerror}; pass --scenarios with a folder holding "
            f"{SET_FILE}"
        ) from None
    except YAMLError as error:
        raise RealSetError(f"{index} is not YAML ({error.__class__.__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("outputs"), list):
        raise RealSetError(f"{index}: needs a `split.seed` and a list of `outputs`")
    seed = str((data.get("split") or {}).get("seed") or "")
    if not seed:
        raise RealSetError(f"{index}: `split.seed` is missing; the halves need a fixed seed")
    additions = data.get("dev_additions") or []
    if not isinstance(additions, list):
        raise RealSetError(f"{index}: `dev_additions` must be a list of outputs")
    outputs = tuple(
        _output(directory, f"{index}: output {number}", entry)
        for number, entry in enumerate(data["outputs"], 1)
    ) + tuple(
        _output(directory, f"{index}: dev addition {number}", entry, added=True)
        for number, entry in enumerate(additions, 1)
    )
    outputs += _batches(directory, index, data.get("batches") or [])
    if not outputs:
        raise RealSetError(f"{index} lists no outputs")
    return RealSet(seed=seed, outputs=outputs)


def _batches(directory: Path, index: Path, batches: object) -> tuple[RealOutput, ...]:
    """The outputs of each later batch, marked with the seed that split it."""
    if not isinstance(batches, list):
        raise RealSetError(f"{index}: `batches` must be a list of {{seed, outputs}}")
    found: list[RealOutput] = []
    for number, batch in enumerate(batches, 1):
        if not isinstance(batch, dict) or not batch.get("seed"):
            raise RealSetError(f"{index}: batch {number} needs a `seed` and its `outputs`")
        entries = batch.get("outputs")
        if not isinstance(entries, list) or not entries:
            raise RealSetError(f"{index}: batch {number} needs a non-empty list of `outputs`")
        where = f"{index}: batch {number} output"
        found += [
            replace(_output(directory, f"{where} {n}", entry), batch=str(batch["seed"]))
            for n, entry in enumerate(entries, 1)
        ]
    return tuple(found)


def _output(directory: Path, where: str, entry: object, *, added: bool = False) -> RealOutput:
    try:
        assert isinstance(entry, dict)
        file = str(entry["file"])
        stem = Path(file).stem
        intents = tuple(
            _intent(f"{stem}-{number:02d}", item) for number, item in enumerate(entry["intents"], 1)
        )
        output = RealOutput(
            file=file,
            tool=str(entry["tool"]),
            command=str(entry["command"]),
            origin=str(entry["origin"]),
            license=str(entry["license"]),
            half="dev" if added else str(entry["half"]),
            path=directory / OUTPUTS_FOLDER / file,
            intents=intents,
            added=added,
        )
    except (AssertionError, KeyError, TypeError, ValueError) as error:
        raise RealSetError(
            f"{where}: not an output ({error}); each needs file, tool, command, origin, license, "
            "half (not for a dev addition) and intents [{kind, intent, needles}]"
        ) from None
    if output.half not in HALVES:
        raise RealSetError(f"{where} ({file}): half must be one of {', '.join(HALVES)}")
    if not intents:
        raise RealSetError(f"{where} ({file}): has no intents")
    if not output.path.is_file():
        raise RealSetError(f"{where}: output file {output.path} is missing")
    return output


def _intent(intent_id: str, item: object) -> RealIntent:
    if not isinstance(item, dict):
        raise ValueError(f"intent {intent_id} is not a mapping")
    kind = str(item["kind"])
    if kind not in INTENT_KINDS:
        raise ValueError(f"intent {intent_id}: kind {kind!r} is not positive or negative")
    shape = item.get("shape")
    if shape is not None and shape not in SHAPES:
        raise ValueError(f"intent {intent_id}: shape {shape!r} is not one of {', '.join(SHAPES)}")
    needles = tuple(str(needle) for needle in item["needles"])
    text = str(item["intent"]).strip()
    if not text or not needles or not all(needles):
        raise ValueError(f"intent {intent_id} needs an intent and non-empty needles")
    return RealIntent(intent_id, kind, shape, text, needles)


def assign_halves(outputs: list[tuple[str, str]], seed: str) -> dict[str, str]:
    """Each (file, tool) to dev or held: a seeded hash orders files within a tool kind and
    they alternate; an odd kind's extra file goes to the half that had the last extra, in
    turn, so every kind differs by at most one and so do the halves overall."""
    by_tool: dict[str, list[str]] = {}
    for file, tool in outputs:
        by_tool.setdefault(tool, []).append(file)
    halves: dict[str, str] = {}
    extra_to = 0
    for tool in sorted(by_tool, key=lambda name: _digest(seed, "tool", name)):
        files = sorted(by_tool[tool], key=lambda name: _digest(seed, "file", name))
        for position, file in enumerate(files):
            halves[file] = HALVES[(extra_to + position) % 2]
        if len(files) % 2:
            extra_to ^= 1
    return halves


def _digest(seed: str, what: str, name: str) -> str:
    return hashlib.sha256(f"{seed}\0{what}\0{name}".encode()).hexdigest()
