"""Whether a command is one a blocking anti-pattern forbids, read the way deny rules read it:
every part, every wrapper (`timeout 5`, `sudo`, `bash -c`), with assignments and quotes removed.

The hook holds the classes and the security pack's wrappers as plain data from the digest, and
reads commands with the security engine's own shell splitter and wrapper reader, which import
nothing heavy; a cheap word check runs first, so only commands that could match pay for the
shell parsing. A blocked command in a hook costs about what an allowed one does (no `re`, no
views, no rule loading)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_QUOTES = str.maketrans("", "", "'\"\\")
# The flag a command pattern's regex is compiled with (re.DOTALL), without importing `re`.
_DOTALL = 16


def denying_record(digest: dict[str, Any], command: str) -> dict[str, Any] | None:
    """The most confident blocking anti-pattern `command` breaks, or None."""
    floor = digest["blocking"]["min_confidence"]
    candidates = [
        record
        for record in digest["records"]
        if record.get("block")
        and record["confidence"] >= floor
        and could_match(command, record["block"])
    ]
    if not candidates:
        return None
    wrappers = wrappers_from(digest["wrappers"])
    for record in sorted(candidates, key=lambda item: -item["confidence"]):
        if blocked_by(command, record["block"], wrappers):
            return record
    return None


def deny_reason(digest: dict[str, Any], record: dict[str, Any]) -> str:
    override = digest["blocking"]["override"].replace("ID", record["id"][:8])
    return f"capy memory {record['id'][:8]}: {record['text']} {override}"


def could_match(command: str, block: dict[str, Any]) -> bool:
    """A quick, generous test: the class's literal command words are all there (and its word
    pattern finds something), so the full reading is worth its cost."""
    tokens = {token.translate(_QUOTES) for token in command.split()}
    literal = [
        [word for word in pattern.split() if "*" not in word] for pattern in block["command"]
    ]
    if not any(all(word in tokens for word in words) for words in literal):
        return False
    word = block.get("word")
    if not word:
        return True
    from capy.packregex import pack_regex

    regex = pack_regex(word)
    return any(regex.search(token) for token in tokens) or regex.search(command) is not None


def blocked_by(command: str, block: dict[str, Any], wrappers: Any) -> bool:
    """True when some reading of `command` is a command of the class: its words (leading
    assignments dropped) match one of the class's command patterns and, when the class has a
    word pattern, some single word after the program matches it (a flag quoted inside a
    message, `-m 'add --force'`, is not the flag)."""
    from capy.packregex import pack_regex
    from capy.security.readings import command_readings
    from capy.security.shellsplit import split_command
    from capy.security.shellwords import LazyWords, is_assignment

    patterns = [pack_regex(source, _DOTALL) for source in block["regexes"]]
    word = pack_regex(block["word"]) if block.get("word") else None
    parts = split_command(command)
    readings, _undecidable = command_readings(parts or [command], wrappers, dequote=False)
    for reading in readings:
        scanned = LazyWords(reading)
        words = [item.value for item in scanned.rest(0)]
        if scanned.broken:
            words = reading.split()
        while words and is_assignment(words[0]):
            words.pop(0)
        joined = " ".join(" ".join(item.split()) for item in words)
        if not any(pattern.match(joined) for pattern in patterns):
            continue
        if word is None or any(word.search(item) for item in words[1:]):
            return True
    return False


class _Wrapper:
    """One of the security pack's command wrappers, from the digest's plain copy: the fields
    capy.security.wrappers reads."""

    __slots__ = (
        "assignments",
        "flag_options",
        "names",
        "opaque_options",
        "operands",
        "query_options",
        "runs",
        "shell_string_flag",
        "value_options",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        self.names = tuple(data["names"])
        self.value_options = frozenset(data["value_options"])
        self.flag_options = frozenset(data["flag_options"])
        self.query_options = frozenset(data["query_options"])
        self.opaque_options = frozenset(data["opaque_options"])
        self.assignments = bool(data["assignments"])
        self.operands = int(data["operands"])
        self.runs = str(data["runs"])
        self.shell_string_flag = data["shell_string_flag"]


class Wrappers:
    """The security pack's active command wrappers as the digest keeps them, found by program
    name as `CommandWrappers.find` finds them; each is built the first time a word names it."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.max_depth = int(data["max_depth"])
        self.fail_closed_max_words = int(data["fail_closed_max_words"])
        self._data = data["wrappers"]
        self._index: dict[str, int] = {}
        for position, item in enumerate(self._data):
            for name in item["names"]:
                self._index.setdefault(name, position)
        self._built: dict[int, _Wrapper] = {}

    def find(self, program: str) -> _Wrapper | None:
        position = self._index.get(program.rsplit("/", 1)[-1])
        if position is None:
            return None
        found = self._built.get(position)
        if found is None:
            found = self._built[position] = _Wrapper(self._data[position])
        return found


def plain_wrappers(view: Any) -> dict[str, Any] | None:
    """The digest's copy of the security pack's `command_wrappers` view (active ones, in
    order), or None when the pack has none."""
    if view is None:
        return None
    from capy.rules.views.base import active

    return {
        "max_depth": view.max_depth,
        "fail_closed_max_words": view.fail_closed_max_words,
        "wrappers": [
            {
                "names": list(wrapper.names),
                "value_options": sorted(wrapper.value_options),
                "flag_options": sorted(wrapper.flag_options),
                "query_options": sorted(wrapper.query_options),
                "opaque_options": sorted(wrapper.opaque_options),
                "assignments": wrapper.assignments,
                "operands": wrapper.operands,
                "runs": str(wrapper.runs.value),
                "shell_string_flag": wrapper.shell_string_flag,
            }
            for wrapper in active(view.wrappers)
        ],
    }


def wrappers_from(data: dict[str, Any] | None) -> Wrappers | None:
    """The wrappers from the digest's plain copy (None: commands are read without them)."""
    return Wrappers(data) if data else None
