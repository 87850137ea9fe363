"""A session's capsules read as the events memory learns from: failed and successful actions
(with their command words, error line, category and signature), user sentences, edits, and the
memory operations capsules carry (add, edit, forget, feedback, injections)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capy.capsules.model import unix_seconds
from capy.memory.words import WORD_PART

if TYPE_CHECKING:
    from capy.capsules.model import Capsule
    from capy.rules.views.memory import MemoryPack

# The metadata key under which memory operations travel in a capsule.
MEMORY_KEY = "memory"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BACKTICKS = re.compile(r"`([^`\n]{1,200})`")
# A quoted shell argument (a commit message, a --reason): data the command carries, whose words
# do not make two commands the same action. A script after `-c` (`bash -c '...'`) is the command.
_QUOTED_ARGUMENT = re.compile(r"(?<!-c )(?:'[^']*'|\"(?:[^\"\\]|\\.)*\")")


@dataclass
class Action:
    """A tool call that failed or succeeded."""

    capsule: str
    tool: str
    command: str
    failed: bool
    output: str
    at: float
    words: frozenset[str]
    files: tuple[str, ...] = ()
    line: str = ""  # the telling error line
    category: str = "other"
    learn: bool = True
    signature: str = ""


@dataclass
class Said:
    """One sentence of a user prompt."""

    capsule: str
    sentence: str
    at: float


@dataclass
class Edit:
    capsule: str
    files: tuple[str, ...]
    at: float


@dataclass
class Operation:
    """A memory operation a capsule carries: add, edit, forget, feedback or injected."""

    capsule: str
    op: dict[str, Any]
    at: float


@dataclass
class Session:
    id: str
    events: list[Any] = field(default_factory=list)


def sessions_of(capsules: list[Capsule], pack: MemoryPack) -> list[Session]:
    """The capsules grouped by session (in order of first appearance), each read as events."""
    found: dict[str, Session] = {}
    calls: dict[str, Action] = {}
    for capsule in capsules:
        if capsule.forgotten:
            continue
        session_id = str(capsule.metadata.get("session_id") or f"capsule:{capsule.id[:12]}")
        session = found.setdefault(session_id, Session(session_id))
        call_id = capsule.metadata.get("tool_use_id")
        earlier = calls.get(call_id) if isinstance(call_id, str) else None
        if capsule.kind == "error" and earlier is not None and not earlier.failed:
            # A backfilled session keeps the call and, after it, its error (capy.capsules
            # .backfill): the call failed, with the error's text.
            _fail(earlier, capsule, pack)
            continue
        for event in _events(capsule, pack):
            session.events.append(event)
            if isinstance(event, Action) and isinstance(call_id, str):
                calls[call_id] = event
    return list(found.values())


def _fail(action: Action, capsule: Capsule, pack: MemoryPack) -> None:
    action.failed = True
    action.capsule = capsule.id
    action.output = _output_of(capsule.content) or capsule.content
    classify(action, pack)


def _events(capsule: Capsule, pack: MemoryPack) -> list[Any]:
    at = unix_seconds(capsule.created_at)
    operation = capsule.metadata.get(MEMORY_KEY)
    if isinstance(operation, dict) and isinstance(operation.get("op"), str):
        return [Operation(capsule.id, operation, at)]
    if capsule.kind == "prompt":
        if capsule.metadata.get("agent_id"):
            return []  # a subagent's prompt is the parent agent's or the harness's words
        return [Said(capsule.id, text, at) for text in own_sentences(capsule.content, pack)]
    if capsule.kind == "diff":
        files = tuple(str(item) for item in capsule.metadata.get("files") or ())
        return [Edit(capsule.id, files, at)]
    if capsule.kind in ("error", "tool_call"):
        return [_action(capsule, at, pack)]
    return []


def own_sentences(text: str, pack: MemoryPack) -> list[str]:
    """The sentences of a prompt in the user's own words: pasted blocks (fences, quoted lines,
    indented code, harness tags) left out, and no sentence split inside inline quotes."""
    for rule in pack.quoted_spans("block"):
        text = rule.regex.sub("\n", text)
    inline = quoted_in(text, pack)
    found, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        if any(begin <= end.start() < stop for begin, stop in inline):
            continue
        found.append(text[start : end.start()])
        start = end.end()
    found.append(text[start:])
    return [part.strip() for part in found if part.strip()]


def quoted_in(text: str, pack: MemoryPack) -> tuple[tuple[int, int], ...]:
    """Where `text` quotes someone else's words inline: no phrasing starts there."""
    return tuple(
        found.span() for rule in pack.quoted_spans("inline") for found in rule.regex.finditer(text)
    )


def _action(capsule: Capsule, at: float, pack: MemoryPack) -> Action:
    metadata = capsule.metadata
    command = metadata.get("command") if isinstance(metadata.get("command"), str) else ""
    tool = str(metadata.get("tool") or capsule.content.split("\n", 1)[0])
    subject = command or _input_text(capsule.content)
    output = _output_of(capsule.content)
    files = tuple(str(item) for item in metadata.get("files") or ())
    action = Action(
        capsule=capsule.id,
        tool=tool,
        command=subject,
        failed=capsule.kind == "error",
        output=output,
        at=at,
        words=command_words(_QUOTED_ARGUMENT.sub(" ", subject), pack.learning.min_word_chars),
        files=files,
    )
    if action.failed:
        classify(action, pack)
    return action


def _output_of(content: str) -> str:
    """What the call printed: after `output: ` in a hook capsule, after the first blank line in a
    backfilled one (its summary, then its output)."""
    if "\noutput: " in content:
        return content.split("\noutput: ", 1)[1]
    return content.split("\n\n", 1)[1] if "\n\n" in content else ""


def _input_text(content: str) -> str:
    lines = content.split("\n")
    for line in lines[1:]:
        if line.startswith("input: "):
            return line.removeprefix("input: ").split(": ", 1)[-1]
    return ""


def command_words(text: str, min_chars: int) -> frozenset[str]:
    """The words of a command, split like the search core splits them (`docker-compose` is
    docker and compose), without the short ones (`-f`, `up`)."""
    return frozenset(word.lower() for word in WORD_PART.findall(text) if len(word) >= min_chars)


def classify(action: Action, pack: MemoryPack) -> None:
    """The error's category (first pack rule that finds it), its telling line and signature."""
    text = action.output or action.command
    for rule in pack.live_errors:
        found = rule.regex.search(text)
        if found is not None:
            action.category, action.learn = rule.category, rule.learn
            action.line = _line_at(text, found.start())
            break
    else:
        action.line = _first_error_line(text)
    action.line = action.line.strip()[: pack.learning.error_chars]
    words = action.command.split()
    program = " ".join(words[:2])
    line = action.line
    # The command's own arguments echoed in the error (a branch, a file) vary between runs of
    # the same failure; they are volatile here too.
    for word in sorted(set(words[2:]), key=len, reverse=True):
        if len(word) >= pack.learning.min_word_chars:
            line = line.replace(word, "#")
    action.signature = f"{action.category}|{normalised(program, pack)}|{normalised(line, pack)}"


def normalised(text: str, pack: MemoryPack) -> str:
    for regex in pack.signature.volatile_regexes:
        text = regex.sub("#", text)
    return " ".join(text.lower().split())


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else len(text)]


def _first_error_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")


def backticked(text: str) -> list[str]:
    return [match.group(1).strip() for match in _BACKTICKS.finditer(text)]
